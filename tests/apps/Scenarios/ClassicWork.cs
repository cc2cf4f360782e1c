// Scenario `classic-work`: the shape of the runtime-async `work` scenario (tests/apps/Async)
// as classic compiler state machines (this project has no runtime-async). RunAsync awaits
// Work(4) 5 times (each awaits Task.Yield() 4 times and returns 0+1+2+3 = 6), then WorkVoid(2),
// WorkDouble(2) (returns 2.0) and WorkFloat(2) (returns 2.0f), twice each.
//
// Logical calls: ClassicWorkScenario.Run 1; RunAsync 1; Work 5 (25 segments, 20 suspensions);
// WorkVoid, WorkDouble, WorkFloat 2 each (3 segments, 2 suspensions per call). In the trace
// each async method is a stub (Work, ...: one Enter/Leave per call, returns at the first
// suspension) plus its state machine's MoveNext (`<Work>d__N.MoveNext`: one Enter/Leave per
// segment, 25 for Work), the first one called by the stub through
// AsyncTaskMethodBuilder.Start, the others by the thread pool on resume.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Scenarios;

public static class ClassicWorkScenario
{
    public const int Calls = 5;
    public const int Iterations = 4;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        long total = RunAsync().GetAwaiter().GetResult();
        Check.Equal("classic-work total", total, Calls * 6L);
        Console.WriteLine($"classic-work total = {total}");
        return Check.Done("classic-work");
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
