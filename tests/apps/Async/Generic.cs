// Scenario `generic`: generic runtime-async code as it is usually written (no NoInlining):
// a generic async method called with a value type (code for that instantiation) and with a
// reference type (shared code, which takes its instantiation as a hidden argument), an async
// method of a generic class, and a generic method that is not async but returns the Task of
// one that is (awaited by runtime-async code, so its async variant runs).
//
// Logical calls, 4 rounds: Echo 8 (4 of Echo<int>, 4 of Echo<string>; each awaits
// Task.Yield(): 2 segments, 1 suspension); Box`1.Get 4 and Box`1.None 4 (static, shared code:
// Box<string>), Cell`1.Get 4 and Cell`1.None 4 (Cell<int>: code for that instantiation), 2
// segments each; Pass 4 (not async: its variant suspends on the Task it returns); Delayed 4
// (awaits Task.Delay(1): 2 segments each). RunAsync 1. Result: sum of i + lengths.
using System;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class GenericScenario
{
    public const int Rounds = 4;

    public static int Run()
    {
        long total = RunAsync().GetAwaiter().GetResult();
        // Per round: i (Echo<int>) + 2 ("x" + i) + 1 ("b") + i (Pass) = 2i + 3.
        Check.Equal("generic total", total, 2L * (0 + 1 + 2 + 3) + 3L * Rounds);
        Console.WriteLine($"generic total = {total}");
        return Check.Done("generic");
    }

    static async Task<long> RunAsync()
    {
        long total = 0;
        for (int i = 0; i < Rounds; i++)
        {
            total += await Echo(i);
            string s = await Echo("x" + i);
            total += s.Length;
            total += await new Box<string>("b").Get();
            total += await Box<string>.None();
            total += await new Cell<int>(i).Get() - i;
            total += await Cell<int>.None();
            total += await Pass(i);
        }
        return total;
    }

    static async Task<T> Echo<T>(T value)
    {
        await Task.Yield();
        return value;
    }

    static Task<T> Pass<T>(T value) => Delayed(value);

    static async Task<T> Delayed<T>(T value)
    {
        await Task.Delay(1);
        return value;
    }

    sealed class Box<T>(T value) where T : class
    {
        public async Task<int> Get()
        {
            await Task.Yield();
            return value.ToString()!.Length;
        }

        public static async Task<int> None()
        {
            await Task.Yield();
            return typeof(T).Name.Length - typeof(T).Name.Length;
        }
    }

    sealed class Cell<T>(T value) where T : struct
    {
        public async Task<int> Get()
        {
            await Task.Yield();
            return value.GetHashCode();
        }

        public static async Task<int> None()
        {
            await Task.Yield();
            return default(T).GetHashCode();
        }
    }
}
