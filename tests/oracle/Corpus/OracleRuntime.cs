// The runtime half of the oracle: the instrumented Corpus.dll calls Counts.Hit(id) at the start
// of every method body (the oracle tool inserts the calls; this namespace is never instrumented,
// and nothing calls it in the plain build); an iterator's MoveNext also calls Counts.Enter(this,
// id) after it and Counts.Return(result, this, id) before each of its returns. At process exit
// the counts go to the file named by $ORACLE_COUNTS, one line per method name:
//
//   name<TAB>calls<TAB>frames<TAB>kind[<TAB>enumerations<TAB>yields<TAB>abandoned<TAB>faulted]
//
// sorted by name (ordinal), only names with a count. frames = entries of the method's bodies
// (overloads and generic instantiations share a name and add up); calls = frames, except for the
// MoveNext of an async state machine, whose calls are its kickoff method's entries (the logical
// calls eltrace reports). An iterator's MoveNext (kind `iterator`) has four more columns, counted
// per enumerator object (`this`): enumerations = objects whose MoveNext ran, yields = MoveNext
// calls that returned true, abandoned = objects whose last MoveNext returned true (the consumer
// stopped before the end), faulted = objects whose last MoveNext threw (entered, never
// returned). The manifest that maps ids to names, kinds and the calls' source is
// `Corpus.oracle.tsv` beside the assembly.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
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

    /// One enumerator's state: its MoveNext is running; its last MoveNext returned true.
    private sealed class Enumerator
    {
        public bool Running;
        public bool LastTrue;
    }

    private static readonly ConditionalWeakTable<object, Enumerator> Enumerators = new();
    private static readonly object IterLock = new();
    /// Per iterator MoveNext id: enumerations, yields, enumerators now after a true, running.
    private static readonly Dictionary<int, long[]> Iters = new();

    private static long[] Iter(int id)
    {
        if (!Iters.TryGetValue(id, out long[]? c))
        {
            c = new long[4];
            Iters[id] = c;
        }
        return c;
    }

    /// An iterator's MoveNext starts on enumerator `self`.
    public static void Enter(object self, int id)
    {
        lock (IterLock)
        {
            long[] c = Iter(id);
            if (!Enumerators.TryGetValue(self, out Enumerator? e))
            {
                e = new Enumerator();
                Enumerators.Add(self, e);
                c[0]++;
            }
            if (e.LastTrue)
            {
                c[2]--;
                e.LastTrue = false;
            }
            e.Running = true;
            c[3]++;
        }
    }

    /// An iterator's MoveNext on `self` returns `result`.
    public static void Return(bool result, object self, int id)
    {
        lock (IterLock)
        {
            long[] c = Iter(id);
            if (Enumerators.TryGetValue(self, out Enumerator? e) && e.Running)
            {
                e.Running = false;
                c[3]--;
                if (result)
                {
                    c[1]++;
                    c[2]++;
                    e.LastTrue = true;
                }
            }
        }
    }

    private static void Write()
    {
        string? path = Environment.GetEnvironmentVariable("ORACLE_COUNTS");
        if (string.IsNullOrEmpty(path))
        {
            Console.Error.WriteLine("oracle: ORACLE_COUNTS is not set; counts not written");
            return;
        }
        var rows = new SortedDictionary<string, (long Calls, long Frames, string Kind, long[] Iter)>(StringComparer.Ordinal);
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
            long[] iter = r.Iter ?? new long[4];
            lock (IterLock)
            {
                if (Iters.TryGetValue(id, out long[]? c))
                {
                    for (int i = 0; i < 4; i++)
                    {
                        iter[i] += c[i];
                    }
                }
            }
            rows[name] = (r.Calls + calls, r.Frames + frames, kind, iter);
        }
        var text = new StringBuilder("# name\tcalls\tframes\tkind[\tenumerations\tyields\tabandoned\tfaulted]\n");
        foreach (var (name, r) in rows)
        {
            text.Append($"{name}\t{r.Calls}\t{r.Frames}\t{r.Kind}");
            if (r.Kind == "iterator")
            {
                text.Append($"\t{r.Iter[0]}\t{r.Iter[1]}\t{r.Iter[2]}\t{r.Iter[3]}");
            }
            text.Append('\n');
        }
        File.WriteAllText(path, text.ToString());
    }
}
