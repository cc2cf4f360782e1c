// The endpoints and their handlers: named methods (not lambdas), so that a report shows
// `WebApp.Endpoints.Hello` and the test can compare its calls with the requests answered.
// Each handler also counts itself, so the app's own count can be compared with the trace's.
using System.Threading;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Hosting;

namespace WebApp;

public static class Endpoints
{
    private static long helloCount;
    private static long fibCount;
    private static long shutdownCount;

    public static long HelloCount => Interlocked.Read(ref helloCount);
    public static long FibCount => Interlocked.Read(ref fibCount);
    public static long ShutdownCount => Interlocked.Read(ref shutdownCount);

    public static void Map(IEndpointRouteBuilder app)
    {
        app.MapGet("/", Hello);
        app.MapGet("/fib/{n:int}", Fib);
        app.MapPost("/shutdown", Shutdown);
    }

    /// GET /: a plain-text greeting; no callees of its own.
    public static string Hello()
    {
        Interlocked.Increment(ref helloCount);
        return "Hello, World!";
    }

    /// GET /fib/{n}: Fibonacci(n) computed by naive recursion, so one request makes a known
    /// number of calls of <see cref="Fibonacci"/> (fib(n+1)*2-1 frames for n >= 0).
    public static string Fib(int n)
    {
        Interlocked.Increment(ref fibCount);
        return Fibonacci(n).ToString(System.Globalization.CultureInfo.InvariantCulture);
    }

    public static long Fibonacci(int n) => n < 2 ? n : Fibonacci(n - 1) + Fibonacci(n - 2);

    /// POST /shutdown: asks the host to stop (graceful: the response is sent, then the server
    /// drains its connections and Main returns).
    public static string Shutdown(IHostApplicationLifetime lifetime)
    {
        Interlocked.Increment(ref shutdownCount);
        lifetime.StopApplication();
        return "stopping";
    }
}
