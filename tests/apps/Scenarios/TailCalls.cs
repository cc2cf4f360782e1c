// Scenario `tailcalls`: calls in tail position that the JIT compiles as tail calls (jumps),
// so the profiler sees Tailcall events. The methods are AggressiveOptimization so they are
// optimized from the first call (tier 0 code does no tail calls); the profiler disables
// inlining, and NoInlining keeps them as calls anyway.
//
// Part 1, mutual recursion: IsEven(n) = n == 0 || IsOdd(n - 1), IsOdd(n) = n != 0 && IsEven(n - 1),
//   called with n = 0..9 (IsEven) : IsEven 30 calls, IsOdd 25 calls in all (n = 0..9 gives
//   sum over n of n + 1 = 55 frames: ceil((n+1)/2) IsEven + floor((n+1)/2) IsOdd); every frame
//   but the last of each chain ends by a tail call (45 Tailcalls, 10 Leaves).
// Part 2, an accumulator loop with three register arguments and a long result:
//   SumTo(n, acc, step) = n == 0 ? acc : SumTo(n - 1, acc + n * step, step), SumTo(100, 0, 1)
//   = 5050, 3 times: 303 frames, 300 Tailcalls, 3 Leaves.
// Part 3, a tail call to another method: Outer(x) = Inner(x + 1), Inner(y) = y * 2 (not a tail
//   call itself), Outer(20) = 42, 5 times: Outer 5 Tailcalls, Inner 5 Enter/Leave.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class TailCallsScenario
{
    private const MethodImplOptions Opt = MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization;

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
    public static int Outer(int x) => Inner(x + 1);

    [MethodImpl(Opt)]
    public static int Inner(int y) => y * 2;
}
