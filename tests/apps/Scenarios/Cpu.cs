// Scenario `cpu [ROUNDS]`: CPU-bound work in a fixed call tree, for the sampled-timing accuracy
// test (crates/cli/tests/e2e/timing.rs). Every leaf call spins 2000-6000 iterations (a few µs),
// so that the profiler's per-call cost is a small part of any function's time in every timing
// mode. Per round: Round 1, Parse 1, Token 20, Hash 1, Mix 8, Sort 1, Compare 10, Matrix 1,
// Row 4, Cell 20, and Spin 20 + 8 + 10 + 20 = 58 calls. Every method is compiled optimized
// at once (AggressiveOptimization: no tier-0 code, no OSR), so that how long the program runs
// before tiering up (which depends on the machine's load) does not change the shares.
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class CpuScenario
{
    public const int DefaultRounds = 12000;

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static int Run(string[] args)
    {
        int rounds = args.Length > 1 ? int.Parse(args[1]) : DefaultRounds;
        long sum = 0;
        for (int r = 0; r < rounds; r++)
        {
            sum += Round(r);
        }
        // No output: the first Console call JITs a lot of framework code (hundreds of ms on a
        // loaded machine), a fixed cost that would make the shares depend on the load.
        return sum == 42 ? 3 : 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Round(int r) => Parse(r) + Hash(r) + Sort(r) + Matrix(r);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Spin(int n, long seed)
    {
        long x = seed | 1;
        for (int i = 0; i < n; i++)
        {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Parse(int r)
    {
        long s = 0;
        for (int i = 0; i < 20; i++) s += Token(r + i);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Token(int i) => Spin(2000, i);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Hash(int r)
    {
        long s = 0;
        for (int i = 0; i < 8; i++) s ^= Mix(r * 8 + i);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Mix(int i) => Spin(6000, i);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Sort(int r)
    {
        long s = 0;
        for (int i = 0; i < 10; i++) s += Compare(r, i);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Compare(int a, int b) => Spin(2500, a ^ b);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Matrix(int r)
    {
        long s = 0;
        for (int i = 0; i < 4; i++) s += Row(r, i);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Row(int r, int i)
    {
        long s = 0;
        for (int j = 0; j < 5; j++) s += Cell(r + i, j);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Cell(int i, int j) => Spin(3000, i * 31 + j);
}
