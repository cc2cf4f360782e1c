// Three facts and one theory with four cases: under eltrace, the test host's trace must show
// each Fact_* method called once and Theory_IsEven_MatchesModulo called four times.
using Xunit;

namespace XunitSample;

public class ArithmeticTests
{
    [Fact]
    public void Fact_Addition_IsCommutative()
    {
        Assert.Equal(Calculator.Add(2, 3), Calculator.Add(3, 2));
    }

    [Fact]
    public void Fact_Multiplication_ByZero_IsZero()
    {
        Assert.Equal(0, Calculator.Multiply(12345, 0));
    }

    [Fact]
    public void Fact_Factorial_OfFive_Is120()
    {
        Assert.Equal(120, Calculator.Factorial(5));
    }

    [Theory]
    [InlineData(0, true)]
    [InlineData(1, false)]
    [InlineData(2, true)]
    [InlineData(7, false)]
    public void Theory_IsEven_MatchesModulo(int n, bool even)
    {
        Assert.Equal(even, Calculator.IsEven(n));
    }
}
