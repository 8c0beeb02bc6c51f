//! The scope of each object while it builds: opening and closing it (an object reached
//! again while its own build runs is a reference cycle, reported with every step of
//! it), the log record it opens, the slots logged to it, and the objects built earlier
//! that it reads again.

use super::{Alloc, BuildCtx, ObjRecord, Open};
use crate::desc::ObjectDesc;
use crate::error::{Error, Loc, Result};

impl BuildCtx {
    /// Opens the scope of `obj` (reached through a property at `via`): allocations and
    /// declarations until [`Self::end`] belong to it. A reference back to an object
    /// whose build is still running is a cycle: an error naming both places.
    fn begin(&mut self, obj: &ObjectDesc, via: &Loc) -> Result<()> {
        if let Some(id) = &obj.id {
            let open: Vec<(&(String, Loc), &Loc)> = self
                .open
                .iter()
                .filter_map(|o| o.id.as_ref().map(|i| (i, &o.via)))
                .collect();
            if let Some(k) = open.iter().position(|((o, _), _)| o == id) {
                // each object of the cycle, where it is defined and where it refers to
                // the next one
                let cycle = &open[k..];
                let mut steps = Vec::new();
                for (i, ((name, def), _)) in cycle.iter().enumerate() {
                    let (next, at) = match cycle.get(i + 1) {
                        Some(((n, _), v)) => (n.as_str(), *v),
                        None => (id.as_str(), via),
                    };
                    steps.push(format!(
                        "\"{name}\" (defined at {def}) refers to \"{next}\" at {at}"
                    ));
                }
                let names: Vec<&str> = cycle.iter().map(|((o, _), _)| o.as_str()).collect();
                return Err(Error::parse(
                    via,
                    format!(
                        "reference cycle {} -> {id}: {}; an object cannot contain itself",
                        names.join(" -> "),
                        steps.join(", ")
                    ),
                ));
            }
        }
        let record = match (&self.replay, self.keys.get(obj)) {
            (None, Some(name)) => {
                self.log.objects.push(ObjRecord {
                    key: name.key.clone(),
                    path: name.path.clone(),
                    category: obj.category,
                    kind: obj.kind.clone(),
                    handle: 0,
                    shape: None,
                    allocs: Vec::new(),
                    order: 0,
                    dependents: Vec::new(),
                });
                let r = self.log.objects.len() - 1;
                self.record_of.insert(obj as *const ObjectDesc as usize, r);
                Some(r)
            }
            _ => None,
        };
        self.open.push(Open {
            record,
            id: obj.id.clone().map(|id| (id, obj.loc.clone())),
            via: via.clone(),
        });
        Ok(())
    }

    /// Closes the innermost scope; the object's handle is `handle`. The enclosing
    /// object (if any) logs it as a resolved child (`as_child`) and becomes its
    /// dependent.
    fn end(&mut self, handle: u32, as_child: Option<fn(u32) -> Alloc>) {
        let Some(open) = self.open.pop() else {
            return;
        };
        if let Some(r) = open.record {
            self.log.objects[r].handle = handle;
            self.log.objects[r].order = self.finished;
            self.finished += 1;
            if let Some(parent) = self.current_record() {
                self.log.objects[r].dependents.push(parent);
            }
        }
        if let Some(child) = as_child {
            self.log_alloc(child(handle));
        }
    }

    /// Runs `f` in the scope of `obj`, closing it on success and failure alike.
    pub(super) fn scoped<T>(
        &mut self,
        obj: &ObjectDesc,
        via: &Loc,
        as_child: Option<fn(u32) -> Alloc>,
        f: impl FnOnce(&mut Self) -> Result<(u32, T)>,
    ) -> Result<T> {
        self.begin(obj, via)?;
        match f(self) {
            Ok((handle, v)) => {
                self.end(handle, as_child);
                Ok(v)
            }
            Err(e) => {
                self.open.pop();
                Err(e)
            }
        }
    }

    pub(super) fn current_record(&self) -> Option<usize> {
        self.open.last().and_then(|o| o.record)
    }

    pub(super) fn log_alloc(&mut self, a: Alloc) {
        if self.replay.is_none() {
            if let Some(r) = self.current_record() {
                self.log.objects[r].allocs.push(a);
            }
        }
    }

    /// An object built earlier (by id) is read again here: log it for the current
    /// object and make the current object its dependent.
    pub(super) fn link_child(&mut self, child: &ObjectDesc, a: Alloc) {
        let Some(parent) = self.current_record() else {
            return;
        };
        self.log_alloc(a);
        if let Some(&r) = self.record_of.get(&(child as *const ObjectDesc as usize)) {
            let deps = &mut self.log.objects[r].dependents;
            if !deps.contains(&parent) {
                deps.push(parent);
            }
        }
    }
}
