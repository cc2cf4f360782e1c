// Scenario `work` of this program, and `classic-work` of tests/apps/Scenarios, which compiles
// this file without runtime async (classic compiler state machines). RunAsync awaits Work(4)
// 5 times (each awaits Task.Yield() 4 times and returns 0+1+2+3 = 6), then WorkVoid(2),
// WorkDouble(2) (returns 2.0) and WorkFloat(2) (returns 2.0f), twice each.
//
// Runtime async (`work`): a runtime-async caller (RunAsync) awaits runtime-async callees, so
// every call of a callee goes to its async variant directly (variant -> variant).
// Logical calls: WorkScenario.Run 1; RunAsync 1 (called from sync Run: thunk 1 call; its variant
// has 12 segments: the first call and one resume after each of its 11 awaits, since every
// callee suspends and RunAsync is resumed once when that callee completes); Work 5 (4 iterations, each
// awaits Task.Yield(): 5 segments and 4 suspensions per call, 25 segments, 20 suspensions,
// result 0+1+2+3 = 6); WorkVoid 2, WorkDouble 2 (returns 2.0), WorkFloat 2 (returns 2.0f), each
// with 2 iterations: 3 segments, 2 suspensions per call. The callees are called by the
// variant RunAsync and awaited at once, so only their async variants run (no thunk calls).
//
// Classic (`classic-work`): logical calls WorkScenario.Run 1; RunAsync 1; Work 5 (25 segments,
// 20 suspensions); WorkVoid, WorkDouble, WorkFloat 2 each (3 segments, 2 suspensions per call).
// In the trace each async method is a stub (Work, ...: one Enter/Leave per call, returns at the
// first suspension) plus its state machine's MoveNext (`<Work>d__N.MoveNext`: one Enter/Leave
// per segment, 25 for Work), the first one called by the stub through
// AsyncTaskMethodBuilder.Start, the others by the thread pool on resume.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class WorkScenario
{
    public const int Calls = 5;
    public const int Iterations = 4;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run(string name)
    {
        long total = RunAsync().GetAwaiter().GetResult();
        Check.Equal($"{name} total", total, Calls * 6L);
        Console.WriteLine($"{name} total = {total}");
        return Check.Done(name);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> RunAsync()
    {
        long total = 0;
        for (int c = 0; c < Calls; c++)
        {
            long r = await Work(Iterations);
            Check.Equal("Work(4)", r, 6L);
            total += r;
        }
        for (int c = 0; c < 2; c++)
        {
            await WorkVoid(2);
            double d = await WorkDouble(2);
            float f = await WorkFloat(2);
            Check.Equal("WorkDouble(2)", d, 2.0);
            Check.Equal("WorkFloat(2)", f, 2.0f);
        }
        return total;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Work(int iterations)
    {
        long sum = 0;
        for (int i = 0; i < iterations; i++)
        {
            await Task.Yield();
            sum += i;
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task WorkVoid(int iterations)
    {
        for (int i = 0; i < iterations; i++)
        {
            await Task.Yield();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<double> WorkDouble(int iterations)
    {
        double sum = 0;
        for (int i = 0; i < iterations; i++)
        {
            await Task.Yield();
            sum += 1.0;
        }
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<float> WorkFloat(int iterations)
    {
        float sum = 0;
        for (int i = 0; i < iterations; i++)
        {
            await Task.Yield();
            sum += 1.0f;
        }
        return sum;
    }
}
