// A framework-heavy workload (issue 24's "unselected code at full speed"): JSON round trips,
// LINQ, dictionaries and string work, where almost all the time is framework code and the
// app's own methods are few and coarse. `EltraceFramework <rounds>` runs the rounds and prints
// `ms <elapsed>` of the timed part (after one warm-up round) and a checksum.
// scripts/bench-framework.sh runs it with no profiler, the profiler with nothing selected and
// the default selection (only this module: the few methods below), alternating.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Text;
using System.Text.Json;

namespace FrameworkBench;

public record Order(int Id, string Customer, List<Line> Lines, DateTime When);
public record Line(string Sku, int Quantity, decimal Price);

public static class Program
{
    static List<Order> MakeOrders(int n, int seed)
    {
        var rng = new Random(seed);
        var orders = new List<Order>(n);
        for (int i = 0; i < n; i++)
        {
            var lines = new List<Line>();
            int k = 1 + rng.Next(6);
            for (int j = 0; j < k; j++)
                lines.Add(new Line($"SKU-{rng.Next(500):D4}", 1 + rng.Next(9), rng.Next(100, 10000) / 100m));
            orders.Add(new Order(i, $"customer{rng.Next(200)}", lines, new DateTime(2026, 1, 1).AddMinutes(rng.Next(500000))));
        }
        return orders;
    }

    static long Round(int seed)
    {
        var orders = MakeOrders(2000, seed);
        string json = JsonSerializer.Serialize(orders);
        var back = JsonSerializer.Deserialize<List<Order>>(json)!;
        var bySku = new Dictionary<string, int>();
        foreach (var o in back)
            foreach (var l in o.Lines)
                bySku[l.Sku] = bySku.TryGetValue(l.Sku, out var q) ? q + l.Quantity : l.Quantity;
        var top = back
            .GroupBy(o => o.Customer)
            .Select(g => new { g.Key, Total = g.Sum(o => o.Lines.Sum(l => l.Price * l.Quantity)) })
            .OrderByDescending(x => x.Total)
            .Take(10)
            .ToList();
        var sb = new StringBuilder();
        foreach (var t in top)
            sb.Append(t.Key.ToUpperInvariant()).Append(':').Append(t.Total.ToString("F2")).Append(';');
        string text = sb.ToString();
        var words = text.Split(';', StringSplitOptions.RemoveEmptyEntries)
            .Select(w => w.Replace("CUSTOMER", "c").Trim())
            .Where(w => w.Contains(':'))
            .ToArray();
        return json.Length + bySku.Count + words.Length + string.Join(",", words).GetHashCode() % 7;
    }

    public static int Main(string[] args)
    {
        if (args.Length == 2 && args[0] == "--sleep")
        {
            // An idle program: the writer's cost while no events come (bench-framework.sh).
            Round(0);
            System.Threading.Thread.Sleep(int.Parse(args[1]) * 1000);
            return 0;
        }
        int rounds = args.Length > 0 ? int.Parse(args[0]) : 40;
        long sum = Round(0);
        var sw = Stopwatch.StartNew();
        for (int r = 1; r <= rounds; r++)
            sum += Round(r);
        sw.Stop();
        Console.WriteLine($"ms {sw.Elapsed.TotalMilliseconds:F1}");
        Console.WriteLine($"checksum {sum}");
        return 0;
    }
}
