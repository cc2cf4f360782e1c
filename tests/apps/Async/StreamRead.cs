// Scenario `stream-read`: a Stream subclass overrides ReadAsync(Memory<byte>, CancellationToken)
// as such overrides are usually written: not `async`, no MethodImpl attributes, returning a
// ValueTask that is not complete yet (the bytes arrive later, from the thread pool). A
// runtime-async method (Consume) awaits it in a loop, and CoreLib's StreamReader reads the
// same kind of stream (on .NET 11 StreamReader is itself runtime-async code).
//
// What the runtime does with it: Consume's await calls ReadAsync's *async variant* (a second
// FunctionID the runtime makes for a Task/ValueTask-returning method that is not async), which
// calls (or inlines) the override and suspends while its ValueTask is pending.
//
// Logical calls: StreamReadScenario.Run 1; Consume 1; SlowStream.ReadAsync(Memory) Chunks + 1
// from Consume (the last returns 0) plus however many StreamReader makes (the test counts
// them with the stream's own counter, printed as `reads`).
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncScenarios;

public static class StreamReadScenario
{
    public const int Chunks = 24;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        var s = new SlowStream(Chunks);
        long total = Consume(s).GetAwaiter().GetResult();
        Check.Equal("stream-read bytes", total, (long)Chunks * SlowStream.ChunkSize);
        var s2 = new SlowStream(Chunks);
        string text = new StreamReader(s2).ReadToEndAsync().GetAwaiter().GetResult();
        Check.Equal("stream-read text", text.Length, Chunks * SlowStream.ChunkSize);
        Console.WriteLine($"stream-read reads = {s.Reads + s2.Reads}");
        return Check.Done("stream-read");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<long> Consume(Stream s)
    {
        var buf = new byte[256];
        long total = 0;
        int n;
        while ((n = await s.ReadAsync(buf.AsMemory(), CancellationToken.None)) > 0)
        {
            total += n;
        }
        return total;
    }
}

/// A read-only stream whose every read completes later, on the thread pool.
public sealed class SlowStream : Stream
{
    public const int ChunkSize = 16;
    private int left;
    public int Reads;

    public SlowStream(int chunks) => left = chunks;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref Reads);
        if (left == 0)
        {
            return new ValueTask<int>(0);
        }
        left--;
        int n = Math.Min(ChunkSize, buffer.Length);
        buffer.Span.Slice(0, n).Fill((byte)'x');
        return new ValueTask<int>(Task.Delay(1).ContinueWith(_ => n, TaskScheduler.Default));
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
