// Runtime-async methods (compiled with runtime-async=on, run with DOTNET_RuntimeAsync=1).
// Work(4) awaits Task.Yield() once per iteration (4 suspensions) and returns 0+1+2+3 = 6;
// Main calls it 5 times. WorkVoid/WorkDouble/WorkFloat are called twice each with 2
// iterations; WorkDouble returns 2.0, WorkFloat 2.0f. Echo<T> awaits Task.Yield() once and
// returns its argument: called twice as Echo<int> (code for that instantiation) and twice as
// Echo<string> (shared code, which takes its instantiation as a hidden argument). Classic(3)
// is a compiler state machine (RuntimeAsyncMethodGeneration(false)) that awaits Task.Yield()
// 3 times and returns 0+1+2 = 3: called 3 times. Count3() is an async iterator (a state
// machine in any build) that awaits Task.Yield() before each of its 3 elements; it is
// enumerated twice, to its end.
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Probes
{
    public static class AsyncProbe
    {
        public const int Calls = 5;
        public const int Iterations = 4;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<long> Work(int n)
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                sum += i;
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task WorkVoid(int n)
        {
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<double> WorkDouble(int n)
        {
            double sum = 0;
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                sum += 1.0;
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<float> WorkFloat(int n)
        {
            float sum = 0;
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                sum += 1.0f;
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<T> Echo<T>(T value)
        {
            await Task.Yield();
            return value;
        }

        public const int ClassicCalls = 3;

        [RuntimeAsyncMethodGeneration(false)]
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<long> Classic(int n)
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                sum += i;
            }
            return sum;
        }

        public static async IAsyncEnumerable<int> Count3()
        {
            for (int i = 0; i < 3; i++)
            {
                await Task.Yield();
                yield return i;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> SumCount3()
        {
            int sum = 0;
            await foreach (int x in Count3())
            {
                sum += x;
            }
            return sum;
        }

        public static bool Run()
        {
            bool ok = true;
            long total = 0;
            for (int c = 0; c < Calls; c++)
            {
                long r = Work(Iterations).GetAwaiter().GetResult();
                ok &= r == 6;
                total += r;
            }
            Program.Report("async.work_total", total);
            for (int c = 0; c < 2; c++)
            {
                WorkVoid(2).GetAwaiter().GetResult();
                double d = WorkDouble(2).GetAwaiter().GetResult();
                float f = WorkFloat(2).GetAwaiter().GetResult();
                ok &= d == 2.0 && f == 2.0f;
                Program.Report("async.double", d);
                Program.Report("async.float", f);
            }
            for (int c = 0; c < 2; c++)
            {
                ok &= Echo(c).GetAwaiter().GetResult() == c;
                ok &= Echo("e").GetAwaiter().GetResult() == "e";
            }
            for (int c = 0; c < ClassicCalls; c++)
            {
                ok &= Classic(3).GetAwaiter().GetResult() == 3;
            }
            for (int c = 0; c < 2; c++)
            {
                ok &= SumCount3().GetAwaiter().GetResult() == 3;
            }
            Program.Report("async.ok", ok ? 1 : 0);
            return ok;
        }
    }
}

namespace System.Runtime.CompilerServices
{
    // Not in the net10.0 reference assemblies; the compiler matches the attribute by name: a
    // method carrying it with `false` is compiled as a state machine, not runtime async.
    [AttributeUsage(AttributeTargets.Method)]
    internal sealed class RuntimeAsyncMethodGenerationAttribute : Attribute
    {
        public RuntimeAsyncMethodGenerationAttribute(bool runtimeAsync) => RuntimeAsync = runtimeAsync;

        public bool RuntimeAsync { get; }
    }
}
