// Scenario `async-shapes`: classic async methods whose state machines are not named
// `<M>d__N` after a method `M` (issue #13, from the oracle test): an async lambda
// (`<>c.<RunAsync>b__N_0`, state machine `<>c+<<RunAsync>b__N_0>d`), a static async local
// function (`<RunAsync>g__Twice|N_1`, state machine `<<RunAsync>g__Twice|N_1>d`), a capturing
// one (a method of the display class `<>c__DisplayClassN_0`), a generic async method
// (``Echo``1``, state machine `<Echo>d__N`1`) called with an int and a string, and an async
// method of a generic type (`Box`1.GetAsync`, state machine `Box`1+<GetAsync>d__N`).
//
// Each of them awaits Task.Yield() once (which always suspends), so each call is 2 segments
// and 1 suspension: logical calls (calls / segments / suspensions):
//   lambda 3 (6 / 3), Twice 2 (4 / 2), AddK 2 (4 / 2), Echo``1 4 (8 / 4), Box`1.GetAsync 3 (6 / 3).
// RunAsync itself is 1 call (its segments depend on whether the awaited task has completed
// when it looks: not checked). Results: lambda 1+2+3, Twice 0+2, AddK 10+11, Echo 5+6+2*1,
// GetAsync 7*3: total 6 + 2 + 21 + 13 + 21 = 63.
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Scenarios;

public static class AsyncShapesScenario
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        int total = RunAsync(10).GetAwaiter().GetResult();
        Check.Equal("async-shapes total", total, 63);
        Console.WriteLine($"async-shapes total = {total}");
        return Check.Done("async-shapes");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> RunAsync(int k)
    {
        Func<int, Task<int>> lambda = async x =>
        {
            await Task.Yield();
            return x + 1;
        };
        int total = 0;
        for (int i = 0; i < 3; i++)
        {
            total += await lambda(i);
        }
        for (int i = 0; i < 2; i++)
        {
            total += await Twice(i);
        }
        for (int i = 0; i < 2; i++)
        {
            total += await AddK(i);
        }
        total += await Echo(5) + await Echo(6);
        total += (await Echo("a")).Length + (await Echo("b")).Length;
        var box = new Box<int>(7);
        for (int i = 0; i < 3; i++)
        {
            total += await box.GetAsync();
        }
        return total;

        static async Task<int> Twice(int x)
        {
            await Task.Yield();
            return 2 * x;
        }

        async Task<int> AddK(int x)
        {
            await Task.Yield();
            return x + k;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<T> Echo<T>(T value)
    {
        await Task.Yield();
        return value;
    }

    public sealed class Box<T>
    {
        private readonly T value;

        public Box(T value) => this.value = value;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public async Task<T> GetAsync()
        {
            await Task.Yield();
            return value;
        }
    }
}
