//! The selection (docs/design.md "Selection"): which functions get probes, from the
//! include/exclude glob lists and whether the module is the framework's. What one glob
//! matches (`!`: `Module!Namespace.Type.Method`, else the name alone) is the selection rule
//! of `eltrace_trace::glob`, which `eltrace record`'s summary shares.

use eltrace_trace::glob::{SelectionGlob, parse_list};

/// The include/exclude lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    include: Vec<SelectionGlob>,
    exclude: Vec<SelectionGlob>,
}

impl Selection {
    pub fn parse(include: &str, exclude: &str) -> Selection {
        Selection {
            include: parse_list(include),
            exclude: parse_list(exclude),
        }
    }

    /// No include and no exclude globs.
    #[cfg(test)]
    pub fn is_default(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether a function gets probes. `module` is the module's `glob::module_stem` (file
    /// name without `.dll`/`.exe`), `name` is `Namespace.Type.Method`, `framework` whether the
    /// module lies in the framework directory.
    pub fn selects(&self, module: &str, name: &str, framework: bool) -> bool {
        let included = if self.include.is_empty() {
            !framework
        } else {
            self.include.iter().any(|g| g.matches(module, name))
        };
        included && !self.exclude.iter().any(|g| g.matches(module, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_selection_skips_framework() {
        let s = Selection::default();
        assert!(s.selects("App", "Demo.P.M", false));
        assert!(!s.selects("System.Private.CoreLib", "System.String.Concat", true));
    }

    #[test]
    fn include_star_selects_everything() {
        let s = Selection::parse("*", "");
        assert!(s.selects("System.Private.CoreLib", "System.String.Concat", true));
        assert!(s.selects("App", "", false));
    }

    #[test]
    fn exclude_wins() {
        let s = Selection::parse("*", "System.*");
        assert!(!s.selects("System.Private.CoreLib", "System.String.Concat", true));
        assert!(s.selects("App", "Demo.P.M", false));
        let s = Selection::parse("", "*.get_*");
        assert!(!s.selects("App", "Demo.P.get_X", false));
        assert!(s.selects("App", "Demo.P.X", false));
    }
}
