// Program `lambdas`: delegates of every origin. Non-capturing lambdas (cached in the compiler's
// `<>c` singleton), lambdas capturing locals and `this` (display classes, nested ones for nested
// scopes), captured loop variables, static lambdas, currying, local functions (capturing,
// static, recursive, generic), method groups (static and instance), multicast delegates, events
// with handlers added and removed, and a memoizing higher-order function.
using System;
using System.Collections.Generic;
using System.Linq;

namespace Corpus;

public static class Lambdas
{
    public static int Run()
    {
        // Non-capturing and static lambdas.
        Func<int, int> twice = x => x * 2;
        Func<int, int> inc = static x => x + 1;
        Func<int, int> both = Compose(twice, inc);
        int composed = Enumerable.Range(0, 50).Select(both).Sum();

        // Captured locals, one display class per scope, nested scopes.
        int counter = 0;
        Action bump = () => counter++;
        var adders = new List<Func<int, int>>();
        for (int i = 0; i < 10; i++)
        {
            int captured = i;
            adders.Add(x => x + captured + counter);
            bump();
        }
        int added = adders.Sum(f => f(1));

        // Currying and partial application.
        Func<int, Func<int, Func<int, int>>> curried = a => b => c => a * 100 + b * 10 + c;
        int curriedValue = curried(1)(2)(3) + curried(4)(5)(6);

        // Local functions: capturing, static, recursive, generic.
        int limit = 12;
        int Tri(int n) => n <= 0 ? 0 : n + Tri(n - 1);
        static int Sq(int n) => n * n;
        T Apply<T>(Func<T, T> f, T seed, int times)
        {
            T v = seed;
            for (int k = 0; k < times && k < limit; k++)
            {
                v = f(v);
            }
            return v;
        }
        int locals = Tri(limit) + Sq(limit) + Apply(x => x * 3 % 1000, 7, 20) + Apply(s => s + "!", "", 5).Length;

        // Method groups and instance delegates capturing `this`.
        var meter = new Meter(3);
        Func<int, int> scale = meter.Scale;
        Func<int, bool> isEven = IsEven;
        int grouped = Enumerable.Range(1, 30).Where(isEven).Select(scale).Sum() + meter.SumScaled(10);

        // Multicast delegates and events.
        var log = new List<string>();
        Action<string> sink = s => log.Add("a:" + s);
        sink += s => log.Add("b:" + s);
        sink("x");
        var button = new Button();
        EventHandler<int> onClick = (_, n) => log.Add("click" + n);
        button.Clicked += onClick;
        button.Clicked += meter.OnClicked;
        for (int n = 0; n < 4; n++)
        {
            button.Click(n);
        }
        button.Clicked -= onClick;
        button.Click(9);

        // Memoization through a captured dictionary.
        Func<int, long> slowSquare = n => (long)n * n;
        Func<int, long> fast = Memoize(slowSquare);
        long memo = 0;
        for (int r = 0; r < 3; r++)
        {
            for (int n = 0; n < 20; n++)
            {
                memo += fast(n);
            }
        }

        string result = $"{composed} {counter} {added} {curriedValue} {locals} {grouped} {log.Count} {meter.Clicks} {memo}";
        return Program.Expect("lambdas", result, "2500 10 155 579 314 885 6 15 7410");
    }

    private static Func<T, T> Compose<T>(Func<T, T> f, Func<T, T> g) => x => g(f(x));

    private static bool IsEven(int n) => n % 2 == 0;

    private static Func<TIn, TOut> Memoize<TIn, TOut>(Func<TIn, TOut> f) where TIn : notnull
    {
        var cache = new Dictionary<TIn, TOut>();
        return x =>
        {
            if (!cache.TryGetValue(x, out TOut? v))
            {
                v = f(x);
                cache[x] = v;
            }
            return v;
        };
    }

    private sealed class Meter
    {
        private readonly int factor;

        public Meter(int factor) => this.factor = factor;

        public int Clicks { get; private set; }

        public int Scale(int x) => x * factor;

        public int SumScaled(int n) => Enumerable.Range(0, n).Sum(i => Scale(i) + factor);

        public void OnClicked(object? sender, int n) => Clicks += n;
    }

    private sealed class Button
    {
        public event EventHandler<int>? Clicked;

        public void Click(int n) => Clicked?.Invoke(this, n);
    }
}
