//! Files a scene reads (mesh and image files) and where it looks for them, loaded once per scene and shared by
//! the rebuilds that parameter updates cause: a moved mesh is transformed again from
//! its cached object-space copy instead of being read from disk, and an environment
//! map whose `scale` changes keeps its decoded image.
//!
//! A scene keeps the files as they were when it was loaded (load it again to pick up
//! files changed on disk); entries are keyed by the resolved path and the loader's
//! options.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::props::PixelArray;
use crate::error::{Error, Result};

/// What identifies one loaded file: its path and the loader with its options, e.g.
/// `"obj flip_tc=true"`.
type FileKey = (PathBuf, String);

/// A decoded mesh, of the type its loader made (the shapes' triangle mesh): the cache
/// sits below the plugins and does not name their types.
type AnyMesh = Arc<dyn Any + Send + Sync>;

/// Decoded files of one scene (cheap to clone: shared).
#[derive(Clone, Debug, Default)]
pub struct LoadCache {
    meshes: Arc<Mutex<HashMap<(FileKey, TypeId), AnyMesh>>>,
    images: Arc<Mutex<HashMap<FileKey, Arc<PixelArray>>>>,
    loads: Arc<AtomicUsize>,
    search_paths: Arc<Vec<PathBuf>>,
}

impl LoadCache {
    /// An empty cache for a scene whose `<path>` folders are `search_paths`.
    pub fn with_search_paths(search_paths: Vec<PathBuf>) -> Self {
        LoadCache {
            search_paths: Arc::new(search_paths),
            ..LoadCache::default()
        }
    }

    /// The scene's `<path>` folders, latest first: where file names are looked up when
    /// they are not next to the file that names them.
    pub fn search_paths(&self) -> &[PathBuf] {
        &self.search_paths
    }

    /// The object-space mesh in `path`, loaded by `load` on first use.
    pub fn mesh<M: Any + Send + Sync>(
        &self,
        path: &Path,
        options: String,
        load: impl FnOnce() -> Result<M>,
    ) -> Result<Arc<M>> {
        let key = ((path.to_path_buf(), options), TypeId::of::<M>());
        let mesh = cached(&self.meshes, key, || {
            self.loads.fetch_add(1, Ordering::Relaxed);
            load().map(|m| Arc::new(m) as AnyMesh)
        })?;
        // the key holds the type: an entry of another type cannot be found under it
        mesh.downcast::<M>()
            .map_err(|_| Error::Render(format!("mesh cache: {} has another type", path.display())))
    }

    /// The decoded image in `path`, loaded by `load` on first use.
    pub fn image(
        &self,
        path: &Path,
        options: String,
        load: impl FnOnce() -> Result<PixelArray>,
    ) -> Result<Arc<PixelArray>> {
        let key = (path.to_path_buf(), options);
        cached(&self.images, key, || {
            self.loads.fetch_add(1, Ordering::Relaxed);
            load().map(Arc::new)
        })
    }

    /// How many files were read from disk.
    pub fn loads(&self) -> usize {
        self.loads.load(Ordering::Relaxed)
    }
}

fn cached<K: Eq + std::hash::Hash, T: ?Sized>(
    map: &Mutex<HashMap<K, Arc<T>>>,
    key: K,
    load: impl FnOnce() -> Result<Arc<T>>,
) -> Result<Arc<T>> {
    if let Some(v) = map.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(v);
    }
    // loaded without the lock held: a slow file must not block other loads
    let v = load()?;
    if let Ok(mut m) = map.lock() {
        // another thread may have loaded it meanwhile: keep one copy
        return Ok(m.entry(key).or_insert(v).clone());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::textures::image_file::tests::scratch;

    #[test]
    fn a_file_is_loaded_once_per_path_and_options() {
        let dir = scratch("load_cache");
        let path = dir.join("m.txt");
        let cache = LoadCache::default();
        let px = || {
            Ok(PixelArray {
                width: 1,
                height: 1,
                channels: 1,
                data: vec![1.0],
            })
        };
        let a = cache.image(&path, "raw=false".into(), px).unwrap();
        let b = cache.clone().image(&path, "raw=false".into(), px).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the second read is the cached copy");
        let c = cache.image(&path, "raw=true".into(), px).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "other options, another decode");
        assert_eq!(cache.loads(), 2);
        let e = cache
            .mesh::<Vec<f32>>(&dir.join("none.obj"), String::new(), || {
                Err(crate::error::Error::io(dir.join("none.obj"), "missing"))
            })
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.obj"), "{e}");
        assert_eq!(cache.loads(), 3, "a failed load is not cached");
        let mesh = || Ok(vec![1.0f32, 2.0]);
        let m = cache.mesh(&path, "obj".into(), mesh).unwrap();
        assert!(Arc::ptr_eq(
            &m,
            &cache.mesh(&path, "obj".into(), mesh).unwrap()
        ));
        assert_eq!(
            cache.loads(),
            4,
            "the second read of a mesh is the cached copy"
        );
    }
}
