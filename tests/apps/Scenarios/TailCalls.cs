// Scenario `tailcalls`: calls in tail position that the JIT compiles as tail calls (jumps),
// so the profiler sees Tailcall events. The methods are AggressiveOptimization so they are
// optimized from the first call (tier 0 code does no tail calls). Only the leaf Inner is
// NoInlining (see Opt below). A tail call is a Tailcall event of the caller at the caller's
// SP, then the callee's Enter at the same SP.
//
// Part 1, mutual recursion: IsEven(n) = n == 0 || IsOdd(n - 1), IsOdd(n) = n != 0 && IsEven(n - 1),
//   called with n = 0..9 (IsEven) : IsEven 30 calls, IsOdd 25 calls in all (n = 0..9 gives
//   sum over n of n + 1 = 55 frames: ceil((n+1)/2) IsEven + floor((n+1)/2) IsOdd); every frame
//   but the last of each chain ends by a tail call (45 Tailcalls: IsEven 25, IsOdd 20; 10 Leaves:
//   5 each).
// Part 2, a self-recursive accumulator with three register arguments and a long result:
//   SumTo(n, acc, step) = n == 0 ? acc : SumTo(n - 1, acc + n * step, step), SumTo(100, 0, 1)
//   = 5050, 3 times. By default the JIT turns the self tail call into a loop: SumTo 3
//   Enter/Leave, no Tailcall. `eltrace record` turns that off (DOTNET_TailCallLoopOpt=0, not
//   with --keep-tail-loops): then each is a tail call, SumTo 303 Enters, 300 Tailcalls, 3
//   Leaves. The same as a mutual pair, SumA -> SumB -> SumA ... (SumA(100, 0, 1) = 5050,
//   3 times): 101 frames per call (SumA 51, SumB 50), 100 Tailcalls and 1 Leave per call;
//   in all SumA 153 Enters, SumB 150, 300 Tailcalls, 3 Leaves (by SumA, n = 0).
// Part 3, a tail call to another method: Outer(x) = Inner(x + 1), Inner(y) = y * 2 (not a tail
//   call itself), Outer(20) = 42, 5 times: Outer 5 Tailcalls, Inner 5 Enter/Leave.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class TailCallsScenario
{
    // No NoInlining on a caller: the runtime refuses implicit (opportunistic) tail calls from a
    // method marked NoInlining (measured: with NoInlining | AggressiveOptimization the JIT
    // emits `call`, no Tailcall event, and IsEven(10_000_000) overflows the stack even without
    // a profiler). The profiler disables inlining, so these calls exist in the trace anyway.
    private const MethodImplOptions Opt = MethodImplOptions.AggressiveOptimization;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        int even = 0;
        for (int n = 0; n < 10; n++)
        {
            bool e = IsEven(n);
            Check.Equal($"IsEven({n})", e, n % 2 == 0);
            even += e ? 1 : 0;
        }
        for (int i = 0; i < 3; i++)
        {
            Check.Equal("SumTo(100)", SumTo(100, 0, 1), 5050L);
            Check.Equal("SumA(100)", SumA(100, 0, 1), 5050L);
        }
        for (int i = 0; i < 5; i++)
        {
            Check.Equal("Outer(20)", Outer(20), 42);
        }
        Console.WriteLine($"tailcalls even = {even}");
        return Check.Done("tailcalls");
    }

    [MethodImpl(Opt)]
    public static bool IsEven(int n) => n == 0 || IsOdd(n - 1);

    [MethodImpl(Opt)]
    public static bool IsOdd(int n) => n != 0 && IsEven(n - 1);

    [MethodImpl(Opt)]
    public static long SumTo(long n, long acc, long step) => n == 0 ? acc : SumTo(n - 1, acc + n * step, step);

    [MethodImpl(Opt)]
    public static long SumA(long n, long acc, long step) => n == 0 ? acc : SumB(n - 1, acc + n * step, step);

    [MethodImpl(Opt)]
    public static long SumB(long n, long acc, long step) => n == 0 ? acc : SumA(n - 1, acc + n * step, step);

    [MethodImpl(Opt)]
    public static int Outer(int x) => Inner(x + 1);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static int Inner(int y) => y * 2;
}
