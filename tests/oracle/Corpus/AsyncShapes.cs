// Program `async-shapes` (issue #25): async code as users write it, no attributes on the methods
// under test, in the shapes where a tracer has to tell a call from a resume:
//
// 1. Streams: DripStream overrides ReadAsync(Memory<byte>, CancellationToken) without `async`.
//    Its ValueTask<int> is complete at once for every third read; for the others it completes
//    later, from a dedicated thread (Completer) or a one-shot Timer (OneShot). CoreLib's
//    StreamReader reads such streams (ReadLineAsync, ReadToEndAsync) and our own async methods
//    await the override directly (ReadDirect, CountBytes with ConfigureAwait(false)), four
//    streams at once.
// 2. Queues: four threads each pump their own single-threaded SynchronizationContext
//    (OneThread) running Batch: 8 concurrent Workers, each awaiting Step 5 times (Step awaits
//    Task.Yield, whose resume is posted to the thread's queue). Then the same Batches at once on
//    the shared thread pool (Task.Run).
// 3. Generics: non-async generic Task-returning methods awaited (Forward<T> => Later(value),
//    Both<T> => Task.WhenAll<T>), Task.FromResult<T>, generic async methods over value and
//    reference types (Task<T> and ValueTask<T>), the async method of a generic struct.
// 4. Async iterators, on two OneThread queues at once: `await foreach` to the end, with `break`
//    (the iterator's `finally` runs from DisposeAsync), with WithCancellation and a token the
//    consumer cancels mid-way (OperationCanceledException caught), an iterator consuming
//    another, and once MoveNextAsync/Current/DisposeAsync by hand.
//
// Deterministic counts whatever the timing: a stream read's completion races with its reader,
// but only CoreLib code depends on who wins (the ValueTasks wrap TaskCompletionSource tasks, no
// IValueTaskSource of ours). Two kinds of our methods run once per await that found its task
// incomplete: OneThread.Post, and an async iterator's own IValueTaskSource<bool> members
// (compiler-generated: OnCompleted). So the code on a OneThread queue awaits only Task.Yield and
// tasks of that queue: they complete on the queue's thread after the await looked at them, and
// the same awaits suspend in every run.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Corpus;

public static class AsyncShapes
{
    private const int Threads = 4;
    private const int Concurrent = 8;
    private const int Steps = 5;

    /// Runs of the `finally` of Numbers (every enumeration of it ends there).
    private static int finished;

    public static int Run()
    {
        string streams;
        using (var completer = new Completer())
        {
            streams = Streams(completer).GetAwaiter().GetResult();
        }
        long queues = OneThread.OnQueues(Threads, Batch).Sum();
        long pool = Pool();
        string generic = Generic().GetAwaiter().GetResult();
        long[] iterated = OneThread.OnQueues(2, _ => Iterate());

        string result = $"{streams} {queues} {pool} {generic} {iterated[0]} {iterated[1]} {finished}";
        return Program.Expect("async-shapes", result, "739 48/692 739 60932 739 368 368 7 5 8 11 12 27 21 15 1071 1071 8");
    }

    // 1. Streams.

    private static async Task<string> Streams(Completer completer)
    {
        byte[] text = Text(48);
        Task<(int Lines, int Chars)> lines = ReadLines(new DripStream(text, 23, completer));
        Task<int> whole = ReadToEnd(new DripStream(text, 37, completer));
        Task<long> direct = ReadDirect(new DripStream(text, 50, completer));
        Task<int> bytes = CountBytes(new DripStream(text, 16, completer));
        await Task.WhenAll(lines, whole, direct, bytes);
        (int n, int chars) = await lines;
        return $"{text.Length} {n}/{chars} {await whole} {await direct} {await bytes}";
    }

    /// `lines` lines of varying length, the last without its newline.
    private static byte[] Text(int lines)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < lines; i++)
        {
            sb.Append("line ").Append(i).Append(": ").Append((char)('a' + i % 26), i % 13);
            if (i + 1 < lines)
            {
                sb.Append('\n');
            }
        }
        return Encoding.ASCII.GetBytes(sb.ToString());
    }

    private static async Task<(int Lines, int Chars)> ReadLines(Stream stream)
    {
        using var reader = new StreamReader(stream, Encoding.ASCII, false, 128);
        int lines = 0;
        int chars = 0;
        string? line;
        while ((line = await reader.ReadLineAsync()) != null)
        {
            lines++;
            chars += line.Length;
        }
        return (lines, chars);
    }

    private static async Task<int> ReadToEnd(Stream stream)
    {
        using var reader = new StreamReader(stream, Encoding.ASCII, false, 128);
        string text = await reader.ReadToEndAsync();
        return text.Length;
    }

    /// Awaits the override directly; a checksum of what it read.
    private static async Task<long> ReadDirect(Stream stream)
    {
        var buffer = new byte[64];
        long sum = 0;
        int n;
        while ((n = await stream.ReadAsync(buffer.AsMemory(), CancellationToken.None)) > 0)
        {
            sum += Checksum(buffer.AsSpan(0, n));
        }
        return sum;
    }

    private static long Checksum(ReadOnlySpan<byte> bytes)
    {
        long sum = 0;
        foreach (byte b in bytes)
        {
            sum += b;
        }
        return sum;
    }

    /// Awaits the override with ConfigureAwait(false), into a small buffer.
    private static async Task<int> CountBytes(Stream stream)
    {
        var buffer = new byte[16];
        int total = 0;
        while (true)
        {
            int n = await stream.ReadAsync(buffer).ConfigureAwait(false);
            if (n == 0)
            {
                return total;
            }
            total += n;
        }
    }

    /// Completes the reads given to it, in order, on a thread of its own.
    private sealed class Completer : IDisposable
    {
        private readonly BlockingCollection<(TaskCompletionSource<int> Source, int Result)> pending = new();
        private readonly Thread thread;

        public Completer()
        {
            thread = new Thread(Loop) { IsBackground = true, Name = "completer" };
            thread.Start();
        }

        public ValueTask<int> Later(int result)
        {
            var source = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            pending.Add((source, result));
            return new ValueTask<int>(source.Task);
        }

        private void Loop()
        {
            foreach ((TaskCompletionSource<int> source, int result) in pending.GetConsumingEnumerable())
            {
                source.SetResult(result);
            }
        }

        public void Dispose()
        {
            pending.CompleteAdding();
            thread.Join();
            pending.Dispose();
        }
    }

    /// A read that a timer completes a millisecond later.
    private sealed class OneShot
    {
        private readonly TaskCompletionSource<int> source = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly Timer timer;
        private readonly int result;

        private OneShot(int result)
        {
            this.result = result;
            timer = new Timer(static s => ((OneShot)s!).Fire(), this, Timeout.Infinite, Timeout.Infinite);
        }

        public static ValueTask<int> After(int result)
        {
            var shot = new OneShot(result);
            shot.timer.Change(1, Timeout.Infinite);
            return new ValueTask<int>(shot.source.Task);
        }

        private void Fire()
        {
            timer.Dispose();
            source.SetResult(result);
        }
    }

    /// A read-only stream over `data`, at most `chunk` bytes a read; every third read is complete
    /// at once, the others complete later (the bytes are in the buffer before).
    private sealed class DripStream : Stream
    {
        private readonly byte[] data;
        private readonly int chunk;
        private readonly Completer completer;
        private int position;
        private int reads;

        public DripStream(byte[] data, int chunk, Completer completer)
        {
            this.data = data;
            this.chunk = chunk;
            this.completer = completer;
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            int n = Math.Min(Math.Min(chunk, buffer.Length), data.Length - position);
            data.AsSpan(position, n).CopyTo(buffer.Span);
            position += n;
            reads++;
            switch (reads % 3)
            {
                case 0:
                    return new ValueTask<int>(n);
                case 1:
                    return completer.Later(n);
                default:
                    return OneShot.After(n);
            }
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }

    // 2. Queues and the pool: many concurrent calls of the same methods on several threads.

    private static long Pool()
    {
        var batches = new Task<long>[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int me = t;
            batches[t] = Task.Run(() => Batch(me));
        }
        return Task.WhenAll(batches).GetAwaiter().GetResult().Sum();
    }

    /// Concurrent Workers, awaited in order: 8 * (0 + 1 + 2 + 3 + 4) + 8 * t.
    private static async Task<long> Batch(int t)
    {
        var workers = new Task<long>[Concurrent];
        for (int i = 0; i < Concurrent; i++)
        {
            workers[i] = Worker(t);
        }
        long sum = 0;
        foreach (Task<long> worker in workers)
        {
            sum += await worker;
        }
        return sum;
    }

    private static async Task<long> Worker(int t)
    {
        long sum = t;
        for (int k = 0; k < Steps; k++)
        {
            sum += await Step(k);
        }
        return sum;
    }

    private static async Task<int> Step(int k)
    {
        await Task.Yield();
        return k;
    }

    // 3. Generic async code.

    private static async Task<string> Generic()
    {
        int[] ints = await Both(3, 4);
        string[] strings = await Both("ab", "cde");
        int forwarded = await Forward(5) + (await Forward("xyz")).Length;
        int ready = await Task.FromResult(6) + (await Task.FromResult("seven")).Length;
        long echoed = await Echo(8L) + (await Echo("nine")).Length;
        int maybe = await Maybe(10, true) + await Maybe(11, false) + (await Maybe("twelve", true)).Length;
        int cells = await new Cell<int>(13).GetAsync() + (await new Cell<string>("fourteen").GetAsync()).Length;
        int[] many = await Task.WhenAll(Enumerable.Range(0, 6).Select(i => Forward(i)));
        return $"{ints.Sum()} {strings.Sum(s => s.Length)} {forwarded} {ready} {echoed} {maybe} {cells} {many.Sum()}";
    }

    /// Not async: the Task of Task.WhenAll<T> over two calls of an async method.
    private static Task<T[]> Both<T>(T a, T b) => Task.WhenAll(Later(a), Later(b));

    /// Not async: returns the Task of an async method.
    private static Task<T> Forward<T>(T value) => Later(value);

    private static async Task<T> Later<T>(T value)
    {
        await Task.Yield();
        return value;
    }

    private static async Task<T> Echo<T>(T value)
    {
        await Task.Delay(1);
        return value;
    }

    private static async ValueTask<T> Maybe<T>(T value, bool wait)
    {
        if (wait)
        {
            await Task.Yield();
        }
        return value;
    }

    private readonly struct Cell<T>
    {
        private readonly T value;

        public Cell(T value) => this.value = value;

        public async Task<T> GetAsync()
        {
            await Task.Yield();
            return value;
        }
    }

    // 4. Async iterators (on a OneThread queue).

    private static async Task<long> Iterate()
    {
        long sum = 0;
        await foreach (int x in Numbers(6))
        {
            sum += x;
        }
        await foreach (int x in Numbers(100))
        {
            if (x == 4)
            {
                break;
            }
            sum += x;
        }
        using (var cts = new CancellationTokenSource())
        {
            try
            {
                await foreach (int x in Ticks(50).WithCancellation(cts.Token))
                {
                    sum += x;
                    if (x == 3)
                    {
                        cts.Cancel();
                    }
                }
            }
            catch (OperationCanceledException)
            {
                sum += 1000;
            }
        }
        await foreach (int x in Squares(Numbers(4)))
        {
            sum += x;
        }
        IAsyncEnumerator<int> e = Numbers(3).GetAsyncEnumerator();
        try
        {
            while (await e.MoveNextAsync())
            {
                sum += e.Current * 10;
            }
        }
        finally
        {
            await e.DisposeAsync();
        }
        return sum;
    }

    private static async IAsyncEnumerable<int> Numbers(int n)
    {
        try
        {
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                yield return await Step(i);
            }
        }
        finally
        {
            Interlocked.Increment(ref finished);
        }
    }

    private static async IAsyncEnumerable<int> Ticks(int n, [EnumeratorCancellation] CancellationToken token = default)
    {
        for (int i = 0; i < n; i++)
        {
            await Pause(token);
            yield return i;
        }
    }

    private static async Task Pause(CancellationToken token)
    {
        await Task.Yield();
        token.ThrowIfCancellationRequested();
    }

    private static async IAsyncEnumerable<int> Squares(IAsyncEnumerable<int> source)
    {
        await foreach (int x in source)
        {
            yield return x * x;
        }
    }
}
