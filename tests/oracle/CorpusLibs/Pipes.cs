// `pipes`: System.IO.Pipelines as its users use it, four readers at once, over our Stream whose
// ReadAsync(Memory<byte>, ...) override is not async (no attributes, a ValueTask that completes
// later). The library's own Stream override (PipeReader.AsStream) is read through our async
// override by CoreLib's StreamReader, which also reads our non-async override directly: on
// .NET 11 StreamReader is runtime-async code, which awaits both overrides through their async
// variants. (The package's net11.0 build itself has no runtime-async method: ../README.md.)
// Every read returns one whole chunk that the reader consumes at once, and the pipe read as a
// Stream is written in full first, so the library takes the same paths in every run.
using System;
using System.Buffers;
using System.IO;
using System.IO.Pipelines;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace CorpusLibs;

public static class Pipes
{
    const int Readers = 4;
    const int Chunks = 12;
    const int ChunkSize = 64;

    public static int Run()
    {
        var totals = new Task<long>[Readers];
        for (int i = 0; i < Readers; i++)
        {
            totals[i] = Task.Run(() => ReadAll(new ChunkStream(Chunks, ChunkSize)));
        }
        long sum = 0;
        foreach (Task<long> t in totals)
        {
            sum += t.GetAwaiter().GetResult();
        }
        string text = Lockstep().GetAwaiter().GetResult();
        // CoreLib's StreamReader (runtime-async code on .NET 11) awaits our override directly.
        string direct = new StreamReader(new ChunkStream(Chunks, ChunkSize)).ReadToEndAsync().GetAwaiter().GetResult();
        return Program.Expect("pipes", $"{sum} {text.Length} {direct.Length}",
            $"{Readers * Chunks * ChunkSize} {Chunks * ChunkSize} {Chunks * ChunkSize}");
    }

    /// Reads a stream to its end through a PipeReader.
    static async Task<long> ReadAll(Stream stream)
    {
        PipeReader reader = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 4096));
        long total = 0;
        while (true)
        {
            ReadResult r = await reader.ReadAsync();
            total += r.Buffer.Length;
            reader.AdvanceTo(r.Buffer.End);
            if (r.IsCompleted)
            {
                break;
            }
        }
        await reader.CompleteAsync();
        return total;
    }

    /// A Pipe written in full, then read as a Stream by CoreLib's StreamReader through our
    /// own async Stream override (every read finds its bytes there: the same path each run).
    static async Task<string> Lockstep()
    {
        var pipe = new Pipe();
        for (int i = 0; i < Chunks; i++)
        {
            Memory<byte> m = pipe.Writer.GetMemory(ChunkSize);
            m.Span.Slice(0, ChunkSize).Fill((byte)('a' + i % 26));
            pipe.Writer.Advance(ChunkSize);
            await pipe.Writer.FlushAsync();
        }
        await pipe.Writer.CompleteAsync();
        var counted = new CountingStream(pipe.Reader.AsStream());
        string text = await new StreamReader(counted, Encoding.ASCII, false, 256).ReadToEndAsync();
        return counted.Reads > 0 ? text : "";
    }
}

/// A read-only stream of `chunks` chunks; every read completes later, on the thread pool.
public sealed class ChunkStream : Stream
{
    private readonly int size;
    private int left;

    public ChunkStream(int chunks, int size)
    {
        left = chunks;
        this.size = size;
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (left == 0)
        {
            return new ValueTask<int>(0);
        }
        left--;
        int n = Math.Min(size, buffer.Length);
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

/// Passes reads through, counting them.
public sealed class CountingStream : Stream
{
    private readonly Stream inner;
    public int Reads;

    public CountingStream(Stream inner) => this.inner = inner;

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        int n = await inner.ReadAsync(buffer, cancellationToken);
        Reads++;
        return n;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

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
