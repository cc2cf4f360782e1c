//! Selection globs (docs/design.md "Selection"): pure matching of `*`/`?` patterns and the
//! include/exclude decision for one function.

/// `*` matches any run of characters (dots included), `?` exactly one character, anything
/// else itself, case-sensitively.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    // Position of the last `*` in the pattern and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            // Let the last `*` swallow one more character and retry.
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

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
            glob_match(&self.pattern, &full)
        } else {
            glob_match(&self.pattern, name)
        }
    }
}

/// `glob;glob;…` with empty entries ignored.
pub fn parse_list(list: &str) -> Vec<Glob> {
    list.split(';')
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
    fn literal() {
        assert!(glob_match("abc", "abc"));
        assert!(!glob_match("abc", "abd"));
        assert!(!glob_match("abc", "ab"));
        assert!(!glob_match("ab", "abc"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "a"));
    }

    #[test]
    fn case_sensitive() {
        assert!(!glob_match("Foo", "foo"));
    }

    #[test]
    fn star() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "A.B.C"));
        assert!(glob_match("A.*", "A.B.C"));
        assert!(!glob_match("A.*", "B.A.C"));
        assert!(glob_match("*.get_*", "Ns.T.get_Value"));
        assert!(!glob_match("*.get_*", "Ns.T.set_Value"));
        assert!(glob_match("*a*b*c", "xxaxxbxxbxc"));
        assert!(!glob_match("*a*b*c", "xxaxxbxxbx"));
        assert!(glob_match("**", "abc"));
        assert!(glob_match("a*", "a"));
    }

    #[test]
    fn question() {
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("???", "äöü"));
        assert!(glob_match("List`?.*", "List`1.Add"));
    }

    #[test]
    fn backtracking() {
        assert!(glob_match("*ab", "aab"));
        assert!(glob_match("a*a*a", "aaaaa"));
        assert!(!glob_match("a*a*a*b", "aaaaa"));
    }

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
