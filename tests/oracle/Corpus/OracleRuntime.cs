// The runtime half of the oracle: the instrumented Corpus.dll calls Counts.Hit(id) at the start
// of every method body (the oracle tool inserts the calls; this namespace is never instrumented,
// and nothing calls it in the plain build). At process exit the counts go to the file named by
// $ORACLE_COUNTS, one line per method name:
//
//   name<TAB>calls<TAB>frames<TAB>kind      sorted by name (ordinal), only names with a count
//
// frames = entries of the method's bodies (overloads and generic instantiations share a name and
// add up); calls = frames, except for the MoveNext of an async state machine, whose calls are its
// kickoff method's entries (the logical calls eltrace reports). The manifest that maps ids to
// names, kinds and the calls' source is `Corpus.oracle.tsv` beside the assembly.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using System.Threading;

namespace OracleRuntime;

public static class Counts
{
    private static readonly long[] Hits;
    private static readonly (string Name, string Kind, int CallsFrom)[] Methods;

    static Counts()
    {
        string manifest = Path.ChangeExtension(typeof(Counts).Assembly.Location, ".oracle.tsv");
        var methods = new List<(string, string, int)>();
        foreach (string line in File.ReadLines(manifest))
        {
            if (line.Length == 0 || line[0] == '#')
            {
                continue;
            }
            string[] f = line.Split('\t');
            if (int.Parse(f[0]) != methods.Count)
            {
                throw new InvalidDataException($"{manifest}: ids out of order at {line}");
            }
            methods.Add((f[1], f[2], int.Parse(f[3])));
        }
        Methods = methods.ToArray();
        Hits = new long[Methods.Length];
        AppDomain.CurrentDomain.ProcessExit += (_, _) => Write();
    }

    public static void Hit(int id) => Interlocked.Increment(ref Hits[id]);

    private static void Write()
    {
        string? path = Environment.GetEnvironmentVariable("ORACLE_COUNTS");
        if (string.IsNullOrEmpty(path))
        {
            Console.Error.WriteLine("oracle: ORACLE_COUNTS is not set; counts not written");
            return;
        }
        var rows = new SortedDictionary<string, (long Calls, long Frames, string Kind)>(StringComparer.Ordinal);
        for (int id = 0; id < Methods.Length; id++)
        {
            (string name, string kind, int from) = Methods[id];
            long calls = Volatile.Read(ref Hits[from]);
            long frames = Volatile.Read(ref Hits[id]);
            if (calls == 0 && frames == 0)
            {
                continue;
            }
            rows.TryGetValue(name, out var r);
            rows[name] = (r.Calls + calls, r.Frames + frames, kind);
        }
        var text = new StringBuilder("# name\tcalls\tframes\tkind\n");
        foreach (var (name, r) in rows)
        {
            text.Append($"{name}\t{r.Calls}\t{r.Frames}\t{r.Kind}\n");
        }
        File.WriteAllText(path, text.ToString());
    }
}
