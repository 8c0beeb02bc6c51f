//! Editable parameters written in place: what a plugin tells an update so that a new
//! value is written where the plugin keeps it, instead of the plugin being built again
//! from its edited description (Mitsuba's `traverse`, whose keys name their fields).

/// Where an editable parameter's value lives in the built scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The plugin's image in the scene's texture store (a bitmap's texels), replaced
    /// whole. A value keeps the declared shape, so the plugin's record, which holds
    /// only the image's size, does not change.
    Image,
}

/// One editable parameter of a plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EditableKey {
    /// Its name in the plugin (the last part of the scene parameter's key).
    pub key: &'static str,
    /// Where its value lives.
    pub place: Place,
}

/// A plugin whose parameters an update can write in place. What derives from them
/// elsewhere in the scene (a BSDF's sampling weight from a texture's mean) is rebuilt
/// by the objects that read them.
pub trait Editable {
    /// Its parameters written in place, with where each lives.
    const EDITABLE: &'static [EditableKey];

    /// Where parameter `key` of this plugin lives, if an update writes it in place.
    fn place_of(key: &str) -> Option<Place> {
        Self::EDITABLE
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.place)
    }
}
