//! Pure name formatting: module file names, nested type names, generic method arity, and the
//! `Namespace.Type.Method` form the selection globs see (the module name they see is
//! `eltrace_trace::glob::module_stem`).

/// UTF-16 (as metadata returns it, possibly NUL-terminated) to a `String`.
pub fn from_wide(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

/// NUL-terminated UTF-16 of `s` (the tests' way back to what metadata returns).
#[cfg(test)]
pub fn to_wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The file name of a module path (`/a/b/App.dll` → `App.dll`); either separator.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The directory of a module path, without the trailing separator (`""` for a bare name).
pub fn dir_name(path: &str) -> &str {
    match path.rfind(['/', '\\']) {
        Some(i) => &path[..i],
        None => "",
    }
}

/// Joins a type chain, outermost first (`["Demo.Outer", "Inner"]` → `Demo.Outer+Inner`).
pub fn join_nested(chain_outer_first: &[String]) -> String {
    chain_outer_first.join("+")
}

/// A method name with the generic method arity appended as ``` ``N ``` (none for 0).
pub fn method_name(name: &str, generic_params: u32) -> String {
    if generic_params == 0 {
        name.to_string()
    } else {
        format!("{name}``{generic_params}")
    }
}

/// `Namespace.Type.Method`, or just the method for a global function.
pub fn full_name(type_name: &str, method: &str) -> String {
    if type_name.is_empty() {
        method.to_string()
    } else {
        format!("{type_name}.{method}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide() {
        let w = to_wide("Fib");
        assert_eq!(w, vec![70, 105, 98, 0]);
        assert_eq!(from_wide(&w), "Fib");
        assert_eq!(from_wide(&[0x41, 0x42]), "AB");
        assert_eq!(from_wide(&[0x41, 0, 0x42]), "A");
        assert_eq!(from_wide(&[]), "");
    }

    #[test]
    fn paths() {
        assert_eq!(file_name("/usr/share/dotnet/App.dll"), "App.dll");
        assert_eq!(file_name("C:\\x\\App.exe"), "App.exe");
        assert_eq!(file_name("App.dll"), "App.dll");
        assert_eq!(dir_name("/a/b/App.dll"), "/a/b");
        assert_eq!(dir_name("App.dll"), "");
    }

    #[test]
    fn nesting_and_generics() {
        assert_eq!(
            join_nested(&["Demo.Outer".into(), "Inner".into()]),
            "Demo.Outer+Inner"
        );
        assert_eq!(
            join_nested(&["A".into(), "B".into(), "C`1".into()]),
            "A+B+C`1"
        );
        assert_eq!(
            join_nested(&["System.Collections.Generic.List`1".into()]),
            "System.Collections.Generic.List`1"
        );
        assert_eq!(method_name("Map", 1), "Map``1");
        assert_eq!(method_name("Map", 0), "Map");
        assert_eq!(full_name("Demo.Box`1", "Map``1"), "Demo.Box`1.Map``1");
        assert_eq!(full_name("", "GlobalFn"), "GlobalFn");
    }
}
