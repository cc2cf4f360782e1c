//! The selection (docs/design.md "Selection"): which functions get probes, from the
//! include/exclude glob lists. Globs match with `eltrace_trace::glob`; one that contains `!`
//! is matched against `Module!Namespace.Type.Method`, any other against the name alone.

use eltrace_trace::glob;
use eltrace_trace::protocol::LIST_SEPARATOR;

/// One glob and what it is matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    /// Contains `!`: matched against `Module!Namespace.Type.Method`.
    qualified: bool,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        Glob {
            pattern: pattern.to_string(),
            qualified: pattern.contains('!'),
        }
    }

    /// `module` is the file name without `.dll`/`.exe`; `name` is `Namespace.Type.Method`.
    pub fn matches(&self, module: &str, name: &str) -> bool {
        if self.qualified {
            let full = format!("{module}!{name}");
            glob::matches(&self.pattern, &full)
        } else {
            glob::matches(&self.pattern, name)
        }
    }
}

/// `glob;glob;…` ([`LIST_SEPARATOR`]) with empty entries ignored.
pub fn parse_list(list: &str) -> Vec<Glob> {
    list.split(LIST_SEPARATOR)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Glob::new)
        .collect()
}

/// The include/exclude lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    include: Vec<Glob>,
    exclude: Vec<Glob>,
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

    /// Whether a function gets probes. `module` is the module file name without
    /// `.dll`/`.exe`, `name` is `Namespace.Type.Method`, `framework` whether the module lies in
    /// the framework directory.
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
    fn qualified_globs() {
        let g = Glob::new("App!*");
        assert!(g.matches("App", "Demo.Program.Main"));
        assert!(!g.matches("Lib", "Demo.Program.Main"));
        let g = Glob::new("*!Demo.*");
        assert!(g.matches("Anything", "Demo.X.Y"));
        let g = Glob::new("Demo.*");
        assert!(g.matches("App", "Demo.X.Y"));
        assert!(!g.matches("Demo", "Other.X"));
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list(""), vec![]);
        assert_eq!(parse_list(";; ;"), vec![]);
        assert_eq!(parse_list("a; b;"), vec![Glob::new("a"), Glob::new("b")]);
    }

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
