// Scenario `async-iter`: async iterators (`IAsyncEnumerable<T>`, `yield return` in an async
// method) consumed with `await foreach` by runtime-async methods, as users write them.
//
// Numbers(n) awaits Task.Yield() before each of its n yields. Sum enumerates Numbers(5) to the
// end (6 MoveNextAsync calls: 5 yields, then false); Early breaks after the element 2 (3 calls,
// 3 yields, disposed: abandoned); Two enumerates one IAsyncEnumerable twice (two enumerators
// of one enumerable, one after the other).
//
// Expected (MoveNextAsync of Numbers's state machine): 4 enumerations (Sum, Early, Two × 2),
// MoveNextAsync calls 6 + 3 + 4 + 4 = 17, yields 5 + 3 + 3 + 3 = 14, completed 3, abandoned 1;
// the body (MoveNext) runs 17 times from MoveNextAsync and resumes once after each of its
// 5 + 3 + 3 + 3 = 14 Task.Yield awaits.
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class AsyncIterScenario
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        Check.Equal("async-iter sum", Sum().GetAwaiter().GetResult(), 10L);
        Check.Equal("async-iter early", Early().GetAwaiter().GetResult(), 3L);
        Check.Equal("async-iter two", Two().GetAwaiter().GetResult(), 6L);
        return Check.Done("async-iter");
    }

    public static async IAsyncEnumerable<int> Numbers(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await Task.Yield();
            yield return i;
        }
    }

    public static async Task<long> Sum()
    {
        long s = 0;
        await foreach (int x in Numbers(5))
        {
            s += x;
        }
        return s;
    }

    public static async Task<long> Early()
    {
        long seen = 0;
        await foreach (int x in Numbers(10))
        {
            seen++;
            if (x == 2)
            {
                break;
            }
        }
        return seen;
    }

    public static async Task<long> Two()
    {
        IAsyncEnumerable<int> three = Numbers(3);
        long s = 0;
        await foreach (int x in three)
        {
            s += x;
        }
        await foreach (int x in three)
        {
            s += x;
        }
        return s;
    }
}
