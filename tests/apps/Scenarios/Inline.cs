// Scenario `inline`: small methods the JIT inlines when it may, called from a loop that is
// optimized from its first call. eltrace forbids inlining only for callees whose calls it
// records (the JITInlining callback), so with the default selection every call of these is
// counted: Small 100,000 times, Getter.Value 100,000 times, Twice 50,000 times (once per two
// iterations) and its Small calls inside. The loop checks its own sum.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public sealed class Getter
{
    private readonly int value;
    public Getter(int value) => this.value = value;
    public int Value => value;
}

public static class InlineScenario
{
    public const int N = 100_000;

    static int Small(int x) => x + 1;

    static int Twice(int x) => Small(x) + Small(x);

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Loop(Getter g)
    {
        long sum = 0;
        for (int i = 0; i < N; i++)
        {
            sum += Small(i) + g.Value;
            if ((i & 1) == 0)
            {
                sum += Twice(i);
            }
        }
        return sum;
    }

    public static int Run()
    {
        long sum = Loop(new Getter(3));
        // sum over i of (i + 1 + 3), plus over even i of 2 * (i + 1).
        long expect = 0;
        for (long i = 0; i < N; i++)
        {
            expect += i + 4;
            if ((i & 1) == 0)
            {
                expect += 2 * (i + 1);
            }
        }
        bool ok = sum == expect;
        Console.WriteLine(ok ? "inline: all results correct" : $"inline: WRONG sum {sum}, expected {expect}");
        return ok ? 0 : 1;
    }
}
