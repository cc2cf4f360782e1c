//! The glob matcher: one set of rules wherever eltrace selects by name (the profiler's
//! `ELTRACE_INCLUDE`/`ELTRACE_EXCLUDE` selection, README "Selection", and `eltrace check
//! --only`). `*` matches any run of characters (dots included), `?` exactly one character,
//! anything else itself, case-sensitively; a glob matches the whole text.

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
}
