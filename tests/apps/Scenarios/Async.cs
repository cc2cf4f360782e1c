// Scenario `async`: classic `async Task` state machines (not runtime-async) whose awaits
// resume on thread-pool threads, with integer and floating-point state carried across them.
//
// Calls: AsyncScenario.Run 1, RunAsync once (its stub), Worker 20 times (stubs), Leaf 200
// times (plain methods called from the state machines). The result is checked against
// values known in advance; a wrong result exits with 1.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Scenarios;

public static class AsyncScenario
{
    public const int Workers = 20;
    public const int Steps = 10;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        (long sum, double fsum) = RunAsync().GetAwaiter().GetResult();
        long want = 0;
        double fwant = 0;
        for (int w = 0; w < Workers; w++)
        {
            for (int s = 0; s < Steps; s++)
            {
                want += w * 100 + s;
                fwant += (w * 100 + s) * 0.5;
            }
        }
        Check.Equal("async sum", sum, want);
        Check.Equal("async fsum", fsum, fwant);
        Console.WriteLine($"async sum = {sum}");
        return Check.Done("async");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<(long, double)> RunAsync()
    {
        var tasks = new Task<(long, double)>[Workers];
        for (int w = 0; w < Workers; w++)
        {
            tasks[w] = Worker(w);
        }
        long sum = 0;
        double fsum = 0;
        foreach (var t in tasks)
        {
            var (a, b) = await t;
            sum += a;
            fsum += b;
        }
        return (sum, fsum);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<(long, double)> Worker(int w)
    {
        long sum = 0;
        double fsum = 0;
        for (int s = 0; s < Steps; s++)
        {
            await Task.Yield();
            long v = Leaf(w, s);
            sum += v;
            fsum += v * 0.5;
        }
        return (sum, fsum);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Leaf(int w, int s) => w * 100 + s;
}
