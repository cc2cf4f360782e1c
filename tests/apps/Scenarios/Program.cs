// Entry point of the e2e test program: runs the scenario named by args[0] and returns its exit
// code. Every method that a test counts is [MethodImpl(NoInlining)] so that its call exists in
// the JIT-compiled code (inlined calls get no probes) and uses its result, so nothing folds away.
// The expected counts are written down beside each scenario and in
// crates/cli/tests/e2e/scenarios/.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Main(string[] args)
    {
        string name = args.Length > 0 ? args[0] : "";
        switch (name)
        {
            case "fib": return FibScenario.Run();
            case "calltree": return CallTreeScenario.Run();
            case "exceptions": return ExceptionsScenario.Run();
            case "threads": return ThreadsScenario.Run();
            case "deep": return DeepScenario.Run();
            case "exit": return ExitScenario.Run();
            case "unhandled": return UnhandledScenario.Run();
            case "fp": return FpScenario.Run();
            case "args": return ArgsScenario.Run();
            case "structs": return StructsScenario.Run();
            case "async": return AsyncScenario.Run();
            case "classic-work": return AsyncScenarios.WorkScenario.Run(name);
            case "classic-nested": return AsyncScenarios.NestedScenario.Run(name);
            case "classic-exception": return AsyncScenarios.ExceptionScenario.Run(name);
            case "classic-configureawait": return AsyncScenarios.ConfigureAwaitScenario.Run(name);
            case "tailcalls": return TailCallsScenario.Run();
            case "tail-loop": return TailLoopScenario.Run(args);
            case "iterators": return IteratorsScenario.Run();
            case "async-shapes": return AsyncShapesScenario.Run();
            case "classic-tier": return AsyncScenarios.TierBothScenario.Run(args);
            case "classic-queues": return AsyncScenarios.QueuesScenario.Run(false);
            case "classic-queues-pool": return AsyncScenarios.QueuesScenario.Run(true);
            case "osr-sync": return OsrSyncScenario.Run(args);
            case "soak": return SoakScenario.Run(args);
            case "many-threads": return MemoryScenario.ManyThreads(args);
            case "busy": return MemoryScenario.Busy(args);
            case "cpu": return CpuScenario.Run(args);
            case "simd": return SimdScenario.Run();
            case "signals": return SignalsScenario.Run();
            case "inline": return InlineScenario.Run();
            default:
                Console.Error.WriteLine(
                    "usage: Scenarios <fib|calltree|exceptions|threads|deep|exit|unhandled|fp|args|structs|async|" +
                    "classic-work|classic-nested|classic-exception|classic-configureawait|tailcalls|soak [SECONDS]|" +
                    "tail-loop [N]|classic-tier [N]|classic-queues|classic-queues-pool|osr-sync [N]|iterators|async-shapes|many-threads [N] [STEPS]|" +
                    "busy [SECONDS] [THREADS]|cpu [ROUNDS]|simd|signals>");
                return 2;
        }
    }
}
