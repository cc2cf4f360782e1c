// Scenario `simd`: vectors kept in a vector register across the Tailcall probe. `Outer*` are
// fully optimized at once (AggressiveOptimization), so their `call; ret` to `Negate*` becomes a
// fast tail call whose Vector128/Vector256 argument the JIT holds in XMM0/YMM0 across
// CORINFO_HELP_PROF_FCN_TAILCALL (the shape of CoreLib's IndexOfAnyAsciiSearcher.IndexOfAnyLookup,
// which broke ASP.NET Core's request parsing on the slow path). The runtime's slow-path stubs
// keep only the low 64 bits of XMM0-7, so a probe there corrupts the argument; eltrace's slow
// path leaves such functions unprobed (docs/abi.md). Exits 1 on any wrong result.
//
// Calls (each NoInlining): SimdScenario.Run 1, Outer128 N, Add128 N, Negate128 N,
//                          Outer256 N, Add256 N, Negate256 N   (N = 1000)
using System;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Scenarios;

public static class SimdScenario
{
    public const int N = 1000;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        for (int i = 0; i < N; i++)
        {
            var a = Vector128.Create(i, i + 1, i + 2, i + 3);
            var b = Vector128.Create(10, 20, 30, 40);
            Check.Equal("Outer128", Outer128(a, b), Vector128.Create(-(i + 10), -(i + 21), -(i + 32), -(i + 43)));
            var c = Vector256.Create(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7);
            var d = Vector256.Create(1, 2, 3, 4, 5, 6, 7, 8);
            Check.Equal("Outer256", Outer256(c, d),
                Vector256.Create(-(i + 1), -(i + 3), -(i + 5), -(i + 7), -(i + 9), -(i + 11), -(i + 13), -(i + 15)));
        }
        return Check.Done("simd");
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Vector128<int> Outer128(Vector128<int> a, Vector128<int> b) => Negate128(Add128(a, b));

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Vector128<int> Add128(Vector128<int> a, Vector128<int> b) => a + b;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Vector128<int> Negate128(Vector128<int> v) => -v;

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Vector256<int> Outer256(Vector256<int> a, Vector256<int> b) => Negate256(Add256(a, b));

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Vector256<int> Add256(Vector256<int> a, Vector256<int> b) => a + b;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Vector256<int> Negate256(Vector256<int> v) => -v;
}
