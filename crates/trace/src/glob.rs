//! The glob matcher: one set of rules wherever eltrace selects by name (the profiler's
//! `ELTRACE_INCLUDE`/`ELTRACE_EXCLUDE` selection, README "Selection", and `eltrace check
//! --only`). `*` matches any run of characters (dots included), `?` exactly one character,
//! anything else itself, case-sensitively; a glob matches the whole text.
//!
//! And the selection rule, what a selection glob is matched against ([`SelectionGlob`]), for
//! the profiler, which selects by it, and `eltrace record`'s summary, which warns about a
//! glob that matched nothing:
//!
//! ```text
//! App!*.Run*   (has `!`)  App!Demo.Program.Run      module App.dll, .dll/.exe stripped
//! Demo.*.Run*             Demo.Program.Run          the name alone
//! ```

use crate::protocol::LIST_SEPARATOR;

/// Whether `pattern` has a wildcard (`*` or `?`).
pub fn has_wildcard(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

/// Whether the glob `pattern` matches all of `text`.
pub fn matches(pattern: &str, text: &str) -> bool {
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

/// The module name a selection glob sees: the module's file name without `.dll`/`.exe` (any
/// case): `App.dll` → `App`.
pub fn module_stem(file: &str) -> &str {
    let n = file.len();
    match file.get(n.saturating_sub(4)..) {
        Some(ext) if ext.eq_ignore_ascii_case(".dll") || ext.eq_ignore_ascii_case(".exe") => {
            &file[..n - 4]
        }
        _ => file,
    }
}

/// One selection glob (`record --include`/`--exclude`, `ELTRACE_INCLUDE`/`ELTRACE_EXCLUDE`)
/// and what it is matched against: one that contains `!` against
/// `Module!Namespace.Type.Method` (the module by its [`module_stem`]), any other against
/// `Namespace.Type.Method` alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionGlob {
    pattern: String,
    /// Contains `!`: matched against `Module!Namespace.Type.Method`.
    qualified: bool,
}

impl SelectionGlob {
    pub fn new(pattern: &str) -> SelectionGlob {
        SelectionGlob {
            pattern: pattern.to_string(),
            qualified: pattern.contains('!'),
        }
    }

    /// The glob as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the glob matches a function: `module` is its module's [`module_stem`],
    /// `name` its `Namespace.Type.Method`.
    pub fn matches(&self, module: &str, name: &str) -> bool {
        if self.qualified {
            matches(&self.pattern, &format!("{module}!{name}"))
        } else {
            matches(&self.pattern, name)
        }
    }
}

/// The globs of a list `glob;glob;…` ([`LIST_SEPARATOR`]), each trimmed, blank ones ignored.
pub fn parse_list(list: &str) -> Vec<SelectionGlob> {
    list.split(LIST_SEPARATOR)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(SelectionGlob::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::matches as glob_match;
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
    fn wildcards() {
        assert!(has_wildcard("regs.*"));
        assert!(has_wildcard("a?c"));
        assert!(!has_wildcard("regs.fast"));
        assert!(!has_wildcard(""));
    }

    #[test]
    fn module_stems() {
        assert_eq!(module_stem("App.dll"), "App");
        assert_eq!(module_stem("Tool.EXE"), "Tool");
        assert_eq!(
            module_stem("System.Private.CoreLib.dll"),
            "System.Private.CoreLib"
        );
        assert_eq!(module_stem("noext"), "noext");
        assert_eq!(module_stem(".dll"), "");
        assert_eq!(module_stem("dll"), "dll");
        assert_eq!(module_stem("a.exe.dll"), "a.exe");
        assert_eq!(module_stem("Ünï.Dll"), "Ünï");
        assert_eq!(module_stem("ü.dl"), "ü.dl");
    }

    #[test]
    fn qualified_globs() {
        let g = SelectionGlob::new("App!*");
        assert!(g.matches("App", "Demo.Program.Main"));
        assert!(!g.matches("Lib", "Demo.Program.Main"));
        let g = SelectionGlob::new("*!Demo.*");
        assert!(g.matches("Anything", "Demo.X.Y"));
        let g = SelectionGlob::new("Demo.*");
        assert!(g.matches("App", "Demo.X.Y"));
        assert!(!g.matches("Demo", "Other.X"));
        assert_eq!(g.pattern(), "Demo.*");
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list(""), vec![]);
        assert_eq!(parse_list(";; ;"), vec![]);
        assert_eq!(
            parse_list("a; b;"),
            vec![SelectionGlob::new("a"), SelectionGlob::new("b")]
        );
    }
}
