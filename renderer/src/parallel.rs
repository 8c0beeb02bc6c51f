//! The process's rayon thread pool, on which every parallel loop of the renderer runs
//! (CPU renders, mesh transforms, BVH refits, table precomputation).
//!
//! Fork: a process forked from one that rendered inherits the parent's memory but only
//! the thread that called `fork`, so the pool is kept with the id of its process and a
//! child builds a new one ([`on_process_pool`]).

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// Runs `f` on this process's rayon pool, or on the caller's own pool when called from
/// one of its threads (`ThreadPool::install`, e.g. to render on fewer threads).
///
/// The pool belongs to the process that built it: a forked child inherits the parent's
/// pool but none of its threads (fork copies only the calling thread), and work queued
/// there would wait forever. So the pool is kept with the id of its process, and a
/// child builds its own on first use (the parent's is left untouched: dropping it would
/// signal threads that do not exist here).
pub fn on_process_pool<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T> {
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    if rayon::current_thread_index().is_some() {
        return Ok(f());
    }
    let pid = std::process::id();
    let pool = {
        let mut slot = POOL.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some((owner, pool)) if *owner == pid => pool.clone(),
            _ => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .thread_name(|i| format!("heliograph-cpu-{i}"))
                    .build()
                    .map(Arc::new)
                    .map_err(|e| Error::Render(format!("cannot start the render threads: {e}")))?;
                if let Some(parent) = slot.replace((pid, pool.clone())) {
                    std::mem::forget(parent);
                }
                pool
            }
        }
    };
    Ok(pool.install(f))
}
