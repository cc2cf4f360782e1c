// Scenario `deep`: recursion 10,000 frames deep, on a thread named "deep" with a 64 MiB stack.
//
// DeepScenario.Body runs once on that thread and calls Recurse(9999), which recurses down to
// Recurse(0): 10,000 calls of DeepScenario.Recurse, all on the stack at once, so the thread's
// deepest stack is 1 + 10,000 = 10,001 frames. Prints "deep = 9999".
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Scenarios;

public static class DeepScenario
{
    public const int Depth = 10_000;

    private static int s_result;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        var thread = new Thread(Body, 64 * 1024 * 1024) { Name = "deep" };
        thread.Start();
        thread.Join();
        Console.WriteLine($"deep = {s_result}");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Body()
    {
        s_result = Recurse(Depth - 1);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Recurse(int n)
    {
        if (n == 0)
        {
            return 0;
        }
        int below = Recurse(n - 1);
        return below + 1;
    }
}
