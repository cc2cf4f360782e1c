// The code under test: small enough that its call counts per test are known exactly
// (Factorial(5) makes 5 calls of Factorial: 5, 4, 3, 2, 1).
namespace XunitSample;

public static class Calculator
{
    public static int Add(int a, int b) => a + b;

    public static int Multiply(int a, int b) => a * b;

    public static int Factorial(int n) => n <= 1 ? 1 : n * Factorial(n - 1);

    public static bool IsEven(int n) => n % 2 == 0;
}
