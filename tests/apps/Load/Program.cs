// Load: sends exactly N HTTP/1.1 GET requests over C keep-alive connections and counts them.
//
//   dotnet Load.dll URL [--requests N] [--connections C] [--timeout-ms T] [--expect BODY]
//                       [--shutdown URL]
//
// C workers, each with its own SocketsHttpHandler limited to one connection, take request
// numbers from one shared counter until N have been taken, so exactly N requests are sent
// (each at most once: no retries) and at most C are in flight. A request is *answered* when
// its response had a 2xx status and its body was read whole (and equals BODY with --expect);
// anything else (an error status, an exception, a timeout, a wrong body) is *failed*.
// `--shutdown URL` sends one POST to URL afterwards (not counted), e.g. the Web app's
// /shutdown.
//
// stdout, one line: answered=A failed=F requests=N connections=K elapsed_ms=E rps=R
// (K = TCP connections actually opened). The first few failures go to stderr.
// Exit status: 0 when every request was answered, 1 when some failed, 2 on bad arguments.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace Load;

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        Options? options = Options.Parse(args);
        if (options is null)
        {
            Console.Error.WriteLine(
                "usage: Load URL [--requests N] [--connections C] [--timeout-ms T] [--expect BODY] [--shutdown URL]");
            return 2;
        }

        var counters = new Counters();
        var workers = new Task[options.Connections];
        var clock = Stopwatch.StartNew();
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(() => Worker(options, counters));
        }
        await Task.WhenAll(workers);
        clock.Stop();

        if (options.ShutdownUrl is not null)
        {
            using var client = new HttpClient { Timeout = TimeSpan.FromMilliseconds(options.TimeoutMs) };
            try
            {
                using HttpResponseMessage response = await client.PostAsync(options.ShutdownUrl, content: null);
                if (!response.IsSuccessStatusCode)
                {
                    Console.Error.WriteLine($"load: shutdown answered {(int)response.StatusCode}");
                }
            }
            catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
            {
                Console.Error.WriteLine($"load: shutdown failed: {e.Message}");
            }
        }

        double ms = clock.Elapsed.TotalMilliseconds;
        double rps = ms > 0 ? counters.Answered * 1000.0 / ms : 0;
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"answered={counters.Answered} failed={counters.Failed} requests={options.Requests} connections={counters.Connections} elapsed_ms={ms:F0} rps={rps:F0}"));
        return counters.Failed == 0 && counters.Answered == options.Requests ? 0 : 1;
    }

    /// One connection's worth of requests, one at a time, until the shared budget is spent.
    private static async Task Worker(Options options, Counters counters)
    {
        var handler = new SocketsHttpHandler
        {
            MaxConnectionsPerServer = 1,
            UseProxy = false,
            UseCookies = false,
            AllowAutoRedirect = false,
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
            ConnectCallback = async (context, token) =>
            {
                var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    await socket.ConnectAsync(context.DnsEndPoint, token);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
                Interlocked.Increment(ref counters.Connections);
                return new NetworkStream(socket, ownsSocket: true);
            },
        };
        using var client = new HttpClient(handler)
        {
            Timeout = TimeSpan.FromMilliseconds(options.TimeoutMs),
        };
        while (Interlocked.Increment(ref counters.Taken) <= options.Requests)
        {
            string? problem;
            try
            {
                using HttpResponseMessage response = await client.GetAsync(options.Url);
                string body = await response.Content.ReadAsStringAsync();
                problem = !response.IsSuccessStatusCode
                    ? $"status {(int)response.StatusCode}"
                    : options.Expect is not null && body != options.Expect
                        ? $"unexpected body \"{body}\""
                        : null;
            }
            catch (Exception e) when (e is HttpRequestException or TaskCanceledException or System.IO.IOException)
            {
                problem = $"{e.GetType().Name}: {e.Message}";
            }

            if (problem is null)
            {
                Interlocked.Increment(ref counters.Answered);
            }
            else if (Interlocked.Increment(ref counters.Failed) <= 5)
            {
                Console.Error.WriteLine($"load: request failed: {problem}");
            }
        }
    }

    private sealed class Counters
    {
        public long Taken;
        public long Answered;
        public long Failed;
        public long Connections;
    }

    private sealed class Options
    {
        public required string Url { get; init; }
        public long Requests { get; private set; } = 10_000;
        public int Connections { get; private set; } = 16;
        public int TimeoutMs { get; private set; } = 30_000;
        public string? Expect { get; private set; }
        public string? ShutdownUrl { get; private set; }

        public static Options? Parse(string[] args)
        {
            if (args.Length == 0 || args[0].StartsWith("--", StringComparison.Ordinal))
            {
                return null;
            }
            var o = new Options { Url = args[0] };
            for (int i = 1; i < args.Length; i++)
            {
                string? value = i + 1 < args.Length ? args[i + 1] : null;
                if (value is null)
                {
                    return null;
                }
                switch (args[i])
                {
                    case "--requests" when long.TryParse(value, out long n) && n >= 0:
                        o.Requests = n;
                        break;
                    case "--connections" when int.TryParse(value, out int c) && c > 0:
                        o.Connections = c;
                        break;
                    case "--timeout-ms" when int.TryParse(value, out int t) && t > 0:
                        o.TimeoutMs = t;
                        break;
                    case "--expect":
                        o.Expect = value;
                        break;
                    case "--shutdown":
                        o.ShutdownUrl = value;
                        break;
                    default:
                        return null;
                }
                i++;
            }
            return o;
        }
    }
}
