// Method names as eltrace reports them, from metadata: `Namespace.Type.Method`, nested types joined
// with `+`, a generic type's arity as it stands in its metadata name (``Box`1``), a generic method's
// arity appended as ``Map``1``. Compiler-generated names (`<>c.<Main>b__0_0`,
// `<Main>g__Local|0_0`, `<Work>d__3.MoveNext`, explicit interface implementations such as
// `System.Collections.IEnumerator.get_Current`) are the metadata names, so they come out as
// the compiler wrote them.
using Mono.Cecil;

namespace Oracle;

public static class Names
{
    /// `Ns.Outer+Inner` (a type without a namespace is its bare name).
    public static string Type(TypeDefinition t)
    {
        if (t.DeclaringType != null)
        {
            return Type(t.DeclaringType) + "+" + t.Name;
        }
        return t.Namespace.Length == 0 ? t.Name : t.Namespace + "." + t.Name;
    }

    /// `Method` or ``Method``N`` for a generic method of N type parameters.
    public static string Method(MethodDefinition m) =>
        m.HasGenericParameters ? m.Name + "``" + m.GenericParameters.Count : m.Name;

    /// `Ns.Type.Method`.
    public static string Full(MethodDefinition m) => Type(m.DeclaringType) + "." + Method(m);

    /// The namespace of the outermost type that holds `t`.
    public static string OuterNamespace(TypeDefinition t)
    {
        while (t.DeclaringType != null)
        {
            t = t.DeclaringType;
        }
        return t.Namespace;
    }
}
