// Scenario `plain-await`: a runtime-async method (Outer) awaits a method that is not async but
// returns a Task (Plain), whose task completes later (Plain returns Inner's task; Inner awaits
// a gate that Run opens only once Outer has returned its task). Run from sync code 3 times.
//
// The gate makes the suspensions deterministic. With `await Task.Yield()` in Inner the thread
// pool could finish Inner before Plain's variant looked at Inner's task on .NET 10 (a plain Task
// await, not a runtime-async call): then neither Plain nor Outer suspended (2 segments fewer
// each), in about 1 run of 25 on the slow path under load. eltrace counted that correctly; the
// test's expectation was the program's race.
//
// What the runtime does with it: an `await` of a Task-returning call inside runtime-async code
// calls the callee's *async variant*, which the runtime also makes for a method that is not
// async: a second FunctionID with the same token and no MethodImpl Async flag (impl 0x8 here),
// entered once, never left when the awaited task is not complete (it suspends), and entered
// again when it resumes. .NET 10 (DOTNET_RuntimeAsync=1): Plain's variant calls the
// Task-returning Plain, which calls Inner's thunk; the pool resumes Inner, then Plain's variant
// (0x400 below Inner's resume), then Outer. .NET 11.0.0: Plain's variant calls Inner's
// variant directly (no Task-returning Plain, no Inner thunk); the pool resumes Inner, Plain's
// variant and Outer at one stack pointer. See docs/runtimes.md.
//
// Logical calls: PlainAwaitScenario.Run 1; Outer 3 (thunk 3; variant 2 segments, 1 suspension
// each); Plain 3 (its async variant: 2 segments, 1 suspension each; on .NET 10 also one frame
// of the Task-returning Plain per call); Inner 3 (2 segments, 1 suspension each; thunk 3 calls
// on .NET 10 only). Outer(i) = i + 1; total = 1 + 2 + 3 = 6.
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class PlainAwaitScenario
{
    public const int Runs = 3;

    /// Opened by Run after Outer returned its (suspended) task; Inner resumes on the pool.
    private static TaskCompletionSource gate = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        long total = 0;
        for (int i = 0; i < Runs; i++)
        {
            gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Task<long> pending = Outer(i);
            gate.SetResult();
            long r = pending.GetAwaiter().GetResult();
            Check.Equal("Outer", r, i + 1L);
            total += r;
        }
        Check.Equal("plain-await total", total, 6L);
        System.Console.WriteLine($"plain-await total = {total}");
        return Check.Done("plain-await");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Outer(int i)
    {
        long v = await Plain(i);
        return v + 1;
    }

    // Not async: returns a task that is not complete yet.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Task<long> Plain(int i) => Inner(i);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Inner(int i)
    {
        await gate.Task;
        return i;
    }
}
