// Scenario `threads`: 8 threads named worker-0 .. worker-7 (named before Start), joined.
//
// Worker i runs ThreadsScenario.Worker once and calls ThreadsScenario.Step (i + 1) * 100 times,
// nothing else of this assembly, so thread worker-i has 1 + 100 * (i + 1) calls, 2 events
// (Enter, Leave) per call, and a deepest stack of 2 (Worker -> Step).
// In all: Worker 8 calls; Step 100 * (1 + 2 + ... + 8) = 3600 calls; Run 1 call on the main thread.
// Step(i, k) = (31 * i + k) % 7; prints each worker's sum and their total.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Scenarios;

public static class ThreadsScenario
{
    public const int Workers = 8;
    public const int StepsPerUnit = 100;

    public sealed class WorkerState
    {
        public int Index;
        public long Sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        var threads = new Thread[Workers];
        var states = new WorkerState[Workers];
        for (int i = 0; i < Workers; i++)
        {
            states[i] = new WorkerState { Index = i };
            threads[i] = new Thread(Worker) { Name = "worker-" + i };
        }
        for (int i = 0; i < Workers; i++)
        {
            threads[i].Start(states[i]);
        }
        long total = 0;
        for (int i = 0; i < Workers; i++)
        {
            threads[i].Join();
            total += states[i].Sum;
            Console.WriteLine($"worker-{i}: {states[i].Sum}");
        }
        Console.WriteLine($"threads total = {total}");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Worker(object? state)
    {
        var s = (WorkerState)state!;
        int steps = (s.Index + 1) * StepsPerUnit;
        long sum = 0;
        for (int k = 0; k < steps; k++)
        {
            sum += Step(s.Index, k);
        }
        s.Sum = sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Step(int i, int k)
    {
        return (31 * i + k) % 7;
    }
}
