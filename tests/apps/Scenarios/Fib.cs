// Scenario `fib`: naive recursive Fibonacci.
//
// Calls of Fib(n): C(0) = C(1) = 1 and C(n) = 1 + C(n-1) + C(n-2), so C(n) = 2*F(n+1) - 1.
// Fib(22) = 17711 and makes 2*F(23) - 1 = 2*28657 - 1 = 57313 calls of FibScenario.Fib.
// Deepest stack: Main -> Run -> Fib(22) -> Fib(21) -> ... -> Fib(1): 2 + 22 = 24 frames.
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class FibScenario
{
    public const int N = 22;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        int result = Fib(N);
        Console.WriteLine($"fib({N}) = {result}");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Fib(int n)
    {
        if (n < 2)
        {
            return n;
        }
        return Fib(n - 1) + Fib(n - 2);
    }
}
