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

public static class Program
{
    // The data are framework types (dictionaries, JSON elements), so that the hot path is the
    // framework's code: the app's own methods are the few below and their lambdas.
    static List<Dictionary<string, object>> MakeOrders(int n, int seed)
    {
        var rng = new Random(seed);
        var orders = new List<Dictionary<string, object>>(n);
        for (int i = 0; i < n; i++)
        {
            var lines = new List<Dictionary<string, object>>();
            int k = 1 + rng.Next(6);
            for (int j = 0; j < k; j++)
                lines.Add(new Dictionary<string, object>
                {
                    ["sku"] = $"SKU-{rng.Next(500):D4}",
                    ["quantity"] = 1 + rng.Next(9),
                    ["price"] = rng.Next(100, 10000) / 100m,
                });
            orders.Add(new Dictionary<string, object>
            {
                ["id"] = i,
                ["customer"] = $"customer{rng.Next(200)}",
                ["lines"] = lines,
                ["when"] = new DateTime(2026, 1, 1).AddMinutes(rng.Next(500000)),
            });
        }
        return orders;
    }

    static long Round(int seed)
    {
        var orders = MakeOrders(2000, seed);
        string json = JsonSerializer.Serialize(orders);
        var back = JsonSerializer.Deserialize<List<Dictionary<string, JsonElement>>>(json)!;
        var bySku = new Dictionary<string, int>();
        foreach (var o in back)
            foreach (var l in o["lines"].EnumerateArray())
            {
                string sku = l.GetProperty("sku").GetString()!;
                int q = l.GetProperty("quantity").GetInt32();
                bySku[sku] = bySku.TryGetValue(sku, out var had) ? had + q : q;
            }
        var top = back
            .GroupBy(o => o["customer"].GetString()!)
            .Select(g => (g.Key, Total: g.Sum(o => o["lines"].EnumerateArray()
                .Sum(l => l.GetProperty("price").GetDecimal() * l.GetProperty("quantity").GetInt32()))))
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
