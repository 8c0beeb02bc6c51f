//! Description writes: a parameter's value written into the object of the edited
//! description as its target says, cloning the nodes it shares on the way.

use std::sync::Arc;

use crate::desc::params::{ParamValue, Target};
use crate::desc::props::Value;
use crate::desc::ObjectDesc;
use crate::error::{Error, Loc, Result};

/// Writes `value` for parameter `key` into the object at `path` below `root` as
/// `target` says, cloning shared nodes on the way.
pub(super) fn write_desc(
    root: &mut Arc<ObjectDesc>,
    path: &[String],
    target: &Target,
    value: &ParamValue,
    key: &str,
) -> Result<()> {
    let o = node_mut(root, path, key)?;
    let loc = o.loc.clone();
    let float = |v: &ParamValue| match v {
        ParamValue::Float(x) => Ok(*x),
        _ => Err(Error::param(
            &Loc::unknown("<parameters>"),
            key,
            "expected a float",
        )),
    };
    match target {
        Target::Prop { set, remove } => {
            let like = o.props.get(set).map(|e| e.value.clone());
            let v = value.to_value(like.as_ref()).ok_or_else(|| {
                Error::param(
                    &Loc::unknown("<parameters>"),
                    key,
                    "device values cannot be written into the scene description",
                )
            })?;
            for r in remove {
                o.props.remove(r);
            }
            match o.props.value_mut(set) {
                Some(slot) => *slot = v,
                None => o.props.set(set, v, loc),
            }
        }
        Target::XFov => {
            let fov = float(value)?;
            o.props.remove("focal_length");
            o.props.set("fov", Value::Float(fov), loc.clone());
            o.props.set("fov_axis", Value::String("x".into()), loc);
        }
        Target::Eta => {
            let eta = float(value)?;
            o.props.set("int_ior", Value::Float(eta), loc.clone());
            o.props.set("ext_ior", Value::Float(1.0), loc);
        }
    }
    Ok(())
}

/// The object at `path` (entry names from `root`), made unique for editing.
fn node_mut<'a>(
    root: &'a mut Arc<ObjectDesc>,
    path: &[String],
    key: &str,
) -> Result<&'a mut ObjectDesc> {
    let mut node = root;
    for name in path {
        node = match Arc::make_mut(node).props.value_mut(name) {
            Some(Value::Object(child)) => child,
            _ => {
                let msg = "the scene description no longer has this object";
                return Err(Error::param(&Loc::unknown("<parameters>"), key, msg));
            }
        };
    }
    Ok(Arc::make_mut(node))
}
