//! Editable parameters written in place: what a plugin tells an update so that a new
//! value is written where the plugin keeps it, instead of the plugin being built again
//! from its edited description (Mitsuba's `traverse`, whose keys name their fields).
//!
//! A plugin lists its editable keys in its category trait's `EDITABLE` table, each with
//! its [`Place`]; what its record derives from them (plastic's specular sampling weight
//! from its reflectances' means) it recomputes in the trait's `parameters_changed`
//! hook. A key the table does not list is rebuilt from the edited description.

/// Where an editable parameter's value lives in the built scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The plugin's image in the scene's texture store (a bitmap's texels), replaced
    /// whole. A value keeps the declared shape, so the plugin's record, which holds
    /// only the image's size, does not change.
    Image,
    /// The constant texture that a field of the plugin's record refers to (an rgb or a
    /// float given in the description: a float fills the three channels). The record
    /// holds only the texture's handle, so it does not change; the texture's record is
    /// rewritten.
    Constant {
        /// The record field that holds the texture's handle.
        field: &'static str,
        /// Where that field lies in the record, in bytes.
        offset: usize,
    },
}

/// One editable parameter of a plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EditableKey {
    /// Its name in the plugin (the scene parameter's key after the object's own key:
    /// `data`, `reflectance.value`).
    pub key: &'static str,
    /// Where its value lives.
    pub place: Place,
}

impl EditableKey {
    /// A constant texture given as parameter `<field>.value`, referred to by record
    /// field `field` at byte `offset`.
    pub const fn constant(key: &'static str, field: &'static str, offset: usize) -> EditableKey {
        EditableKey {
            key,
            place: Place::Constant { field, offset },
        }
    }
}

/// Where parameter `key` (relative to its object) lives according to a plugin's
/// `table`, if an update writes it in place.
pub fn place_of(table: &[EditableKey], key: &str) -> Option<Place> {
    table.iter().find(|e| e.key == key).map(|e| e.place)
}

/// A constant texture key of a plugin's table: `$key` with the record field named
/// after it (`editable_constant!(Diffuse, "reflectance.value", reflectance)`).
#[macro_export]
macro_rules! editable_constant {
    ($rec:ty, $key:literal, $field:ident) => {
        $crate::plugin::patch::EditableKey::constant(
            $key,
            stringify!($field),
            std::mem::offset_of!($rec, $field),
        )
    };
}
