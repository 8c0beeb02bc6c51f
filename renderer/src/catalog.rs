//! The catalog: every registered plugin of every category, for listings
//! (`heliograph plugins`, the README's plugin table, the fuzzers' type lists).
//!
//! It sits at the top of the core, above every category, so that the categories'
//! registries and the small `plugin` module below them need not know one another.

use crate::plugin::PluginInfo;

/// Every registered plugin of every category, in a fixed category order (shapes,
/// BSDFs, sensors, films, reconstruction filters, samplers, integrators), each
/// category in its registry's order.
pub fn registered() -> Vec<PluginInfo> {
    let mut out = crate::shapes::REGISTRY.to_vec();
    out.extend(crate::bsdfs::REGISTRY.iter().map(|e| e.info));
    out.extend(crate::textures::REGISTRY.iter().map(|e| e.info));
    out.extend(crate::emitters::REGISTRY.iter().map(|e| e.info));
    for category in [
        crate::sensors::REGISTRY,
        crate::films::REGISTRY,
        crate::rfilters::REGISTRY,
        crate::samplers::REGISTRY,
        crate::integrators::REGISTRY,
    ] {
        out.extend_from_slice(category);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn registered_lists_every_category_once_in_order_with_unique_names() {
        let all = super::registered();
        let mut categories: Vec<&str> = all.iter().map(|p| p.category).collect();
        categories.dedup();
        assert_eq!(
            categories,
            [
                "shape",
                "bsdf",
                "texture",
                "emitter",
                "sensor",
                "film",
                "rfilter",
                "sampler",
                "integrator"
            ]
        );
        let mut names: Vec<&str> = all.iter().map(|p| p.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a plugin name is in two categories");
    }
}
