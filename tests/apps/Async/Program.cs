// Entry point of the runtime-async test program: runs the scenario named by args[0] and
// returns its exit code (0 = every result correct, 1 = a wrong result, 2 = usage).
// Run with DOTNET_RuntimeAsync=1, otherwise the methods compile as classic state machines.
// The first scenarios mark every counted method [MethodImpl(NoInlining)]; `stream-read`,
// `generic` and `inline-resume` are written as users write them. Expected counts are written
// beside each scenario and in docs/async-observations.md.
using System;
using System.Runtime.CompilerServices;

namespace AsyncScenarios;

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Main(string[] args)
    {
        string name = args.Length > 0 ? args[0] : "";
        switch (name)
        {
            case "work": return WorkScenario.Run(name);
            case "sync-caller": return SyncCallerScenario.Run();
            case "nested": return NestedScenario.Run(name);
            case "exception": return ExceptionScenario.Run(name);
            case "configureawait": return ConfigureAwaitScenario.Run(name);
            case "plain-await": return PlainAwaitScenario.Run();
            case "stream-read": return StreamReadScenario.Run();
            case "async-iter": return AsyncIterScenario.Run();
            case "queues": return QueuesScenario.Run(pool: false);
            case "queues-pool": return QueuesScenario.Run(pool: true);
            case "generic": return GenericScenario.Run();
            case "inline-resume": return InlineResumeScenario.Run();
            case "tier-both": return TierBothScenario.Run(args);
            case "tier-caller": return TierCallerScenario.Run(args);
            case "tier-callee": return TierCalleeScenario.Run(args);
            default:
                Console.Error.WriteLine("usage: Async <work|sync-caller|nested|exception|configureawait|plain-await|stream-read|async-iter|queues|queues-pool|generic|inline-resume|tier-both [N]|tier-caller [N]|tier-callee [M] [K] [H]>");
                return 2;
        }
    }
}

static class Check
{
    public static int Failures;

    public static void Equal<T>(string what, T got, T want) where T : IEquatable<T>
    {
        if (!got.Equals(want))
        {
            Failures++;
            if (Failures <= 10)
            {
                Console.WriteLine($"WRONG {what}: got {got}, want {want}");
            }
        }
    }

    public static int Done(string scenario)
    {
        Console.WriteLine(Failures == 0 ? $"{scenario}: all results correct" : $"{scenario}: {Failures} wrong results");
        return Failures == 0 ? 0 : 1;
    }
}
