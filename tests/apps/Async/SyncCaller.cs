// Scenario `sync-caller`: Work(4) called 5 times from synchronous code
// (Work(4).GetAwaiter().GetResult()), so every call goes through the Task-returning thunk.
//
// Logical calls: SyncCallerScenario.Run 1; Work 5 (thunk 5 calls; variant 5 first calls +
// 20 resumes = 25 segments, 20 suspensions; result 6 each).
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class SyncCallerScenario
{
    public const int Calls = 5;
    public const int Iterations = 4;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        long total = 0;
        for (int c = 0; c < Calls; c++)
        {
            long r = Work(Iterations).GetAwaiter().GetResult();
            Check.Equal("Work(4)", r, 6L);
            total += r;
        }
        Console.WriteLine($"sync-caller total = {total}");
        return Check.Done("sync-caller");
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
}
