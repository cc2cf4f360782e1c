// `Oracle compare ORACLE.tsv REPORT.json [MODULE]`: the comparison rule of the oracle test.
//
// ORACLE.tsv is what the instrumented run wrote at exit (`name calls frames kind`, see
// Corpus/OracleRuntime.cs); REPORT.json is `eltrace report --json --top 100000` of the plain run.
// The rule: take the report's functions of MODULE (default Corpus.dll; several: a comma-separated
// list, e.g. `CorpusLibs.dll,System.IO.Pipelines.dll`) but any runtime-async thunk row
// (`M [thunk]`; reports now merge a method's thunk and variant into one row), and the oracle's rows;
// the two name sets must be equal, and for every name the report's `calls` must equal the
// oracle's `calls`. Frames are not compared: an async method's segments depend on which awaits
// found their task completed, which differs from run to run (its calls do not); the oracle's
// `frames` and the report's `segments` are printed beside a mismatch to explain it. For an
// iterator's MoveNext the enumerations, yields, abandoned and faulted enumerations must equal
// the report's `iterator` object too (abandoned: its abandoned + pending_at_end, the oracle
// counting every enumerator whose last MoveNext returned true). A trace that dropped events
// proves nothing: it fails as invalid. Exit 0 when everything matches, 1 otherwise.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.Json;

namespace Oracle;

public static class Compare
{
    /// `Iter`: enumerations, yields, abandoned, faulted (iterators only, else null).
    public record struct Counts(long Calls, long Frames, string Kind, long[]? Iter = null);

    /// A runtime-async method's Task-returning thunk: made by the runtime, no IL in the module,
    /// so the oracle cannot count it; the method's own row (its async variant) has its calls.
    const string ThunkSuffix = " [thunk]";

    public static int Run(string oraclePath, string reportPath, string module)
    {
        var modules = new HashSet<string>(module.Split(','), StringComparer.Ordinal);
        Dictionary<string, Counts> oracle = ReadOracle(oraclePath);
        using JsonDocument doc = JsonDocument.Parse(File.ReadAllText(reportPath));
        JsonElement trace = doc.RootElement.GetProperty("trace");
        long dropped = trace.GetProperty("dropped_events").GetInt64();
        var traced = new Dictionary<string, Counts>(StringComparer.Ordinal);
        foreach (JsonElement f in doc.RootElement.GetProperty("functions").EnumerateArray())
        {
            if (!modules.Contains(f.GetProperty("module").GetString() ?? ""))
            {
                continue;
            }
            string name = f.GetProperty("name").GetString()!;
            if (name.EndsWith(ThunkSuffix, StringComparison.Ordinal))
            {
                continue;
            }
            traced.TryGetValue(name, out Counts c);
            long[]? iter = c.Iter;
            if (f.TryGetProperty("iterator", out JsonElement it))
            {
                long[] add =
                {
                    it.GetProperty("enumerations").GetInt64(), it.GetProperty("yields").GetInt64(),
                    it.GetProperty("abandoned").GetInt64() + it.GetProperty("pending_at_end").GetInt64(),
                    it.GetProperty("faulted").GetInt64(),
                };
                iter = iter == null ? add : iter.Zip(add, (a, b) => a + b).ToArray();
            }
            traced[name] = new Counts(
                c.Calls + f.GetProperty("calls").GetInt64(), c.Frames + f.GetProperty("segments").GetInt64(), "", iter);
        }

        int mismatches = 0;
        foreach (string name in oracle.Keys.Union(traced.Keys).OrderBy(n => n, StringComparer.Ordinal))
        {
            bool inOracle = oracle.TryGetValue(name, out Counts o);
            bool inTrace = traced.TryGetValue(name, out Counts t);
            bool sameIter = o.Iter == null || (t.Iter != null && o.Iter.SequenceEqual(t.Iter));
            if (inOracle && inTrace && o.Calls == t.Calls && sameIter)
            {
                continue;
            }
            mismatches++;
            string Iter(long[]? c) => c == null ? "" : $" enumerations {c[0]} yields {c[1]} abandoned {c[2]} faulted {c[3]}";
            string want = inOracle ? $"calls {o.Calls} frames {o.Frames} ({o.Kind}){Iter(o.Iter)}" : "absent";
            string got = inTrace ? $"calls {t.Calls} segments {t.Frames}{Iter(t.Iter)}" : "absent";
            Console.WriteLine($"MISMATCH\t{name}\toracle: {want}\teltrace: {got}");
        }
        Console.WriteLine(
            $"oracle: {oracle.Count} functions, eltrace: {traced.Count} in {module}, " +
            $"{mismatches} mismatched, dropped events {dropped}");
        if (dropped != 0)
        {
            Console.WriteLine("INVALID\tthe trace dropped events: its counts prove nothing");
        }
        return mismatches == 0 && dropped == 0 ? 0 : 1;
    }

    /// `name<TAB>calls<TAB>frames<TAB>kind` lines, four more counts for an iterator's
    /// MoveNext; `#` starts a comment line.
    static Dictionary<string, Counts> ReadOracle(string path)
    {
        var rows = new Dictionary<string, Counts>(StringComparer.Ordinal);
        foreach (string line in File.ReadLines(path))
        {
            if (line.Length == 0 || line[0] == '#')
            {
                continue;
            }
            string[] f = line.Split('\t');
            if (f.Length != 4 && f.Length != 8)
            {
                throw new InvalidOperationException($"{path}: not `name calls frames kind [4 iterator counts]`: {line}");
            }
            long[]? iter = f.Length == 8 ? f[4..].Select(long.Parse).ToArray() : null;
            rows.Add(f[0], new Counts(long.Parse(f[1]), long.Parse(f[2]), f[3], iter));
        }
        return rows;
    }
}
