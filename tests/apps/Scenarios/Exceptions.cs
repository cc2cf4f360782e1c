// Scenario `exceptions`: exceptions thrown through several frames and caught.
//
// Part 1, through a finally (i = 0..4, each caught in Run):
//   Thrower.Level1 5 calls, 5 unwound; Thrower.Level2 (try/finally) 5, 5 unwound;
//   Thrower.Level3 (throws) 5, 5 unwound; Thrower.Cleanup (in Level2's finally) 5, 0 unwound.
// Part 2, a filter (i = 0..5): `catch (CodedException e) when (Filter.IsEven(e.Code))`
//   Filter.Raise (throws) 6 calls, 6 unwound; Filter.IsEven 6 calls (runs in the first pass,
//   while Raise's frame is still there), 0 unwound; 3 even caught, 3 odd caught by the next clause.
// Part 3, a rethrow (i = 0..3, each caught in Run):
//   Rethrow.Outer 4 calls, 4 unwound; Rethrow.Middle (catches, logs, `throw;`) 4, 4 unwound;
//   Rethrow.Inner (throws) 4, 4 unwound; Rethrow.Log (in Middle's catch) 4, 0 unwound.
// ExceptionsScenario.Run 1 call, 0 unwound. Nothing stays open; every frame is closed.
// Prints "caught=5 cleanups=5 even=3 odd=3 rethrown=4 logged=4".
using System;
using System.Runtime.CompilerServices;

namespace Scenarios;

public static class ExceptionsScenario
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Run()
    {
        int caught = 0;
        for (int i = 0; i < 5; i++)
        {
            try
            {
                Thrower.Level1(i);
            }
            catch (InvalidOperationException)
            {
                caught++;
            }
        }

        int even = 0;
        int odd = 0;
        for (int i = 0; i < 6; i++)
        {
            try
            {
                Filter.Raise(i);
            }
            catch (CodedException e) when (Filter.IsEven(e.Code))
            {
                even++;
            }
            catch (CodedException)
            {
                odd++;
            }
        }

        int rethrown = 0;
        for (int i = 0; i < 4; i++)
        {
            try
            {
                Rethrow.Outer(i);
            }
            catch (FormatException)
            {
                rethrown++;
            }
        }

        Console.WriteLine(
            $"caught={caught} cleanups={Thrower.Cleanups} even={even} odd={odd} " +
            $"rethrown={rethrown} logged={Rethrow.Logged}");
        return 0;
    }
}

public sealed class CodedException : Exception
{
    public readonly int Code;

    public CodedException(int code) : base("code " + code)
    {
        Code = code;
    }
}

public static class Thrower
{
    public static int Cleanups;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level1(int i)
    {
        int r = Level2(i);
        return r + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level2(int i)
    {
        try
        {
            int r = Level3(i);
            return r + 2;
        }
        finally
        {
            Cleanup(i);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Level3(int i)
    {
        if (i >= 0)
        {
            throw new InvalidOperationException("level 3, i = " + i);
        }
        return i;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Cleanup(int i)
    {
        Cleanups += i >= 0 ? 1 : 0;
    }
}

public static class Filter
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Raise(int i)
    {
        throw new CodedException(i);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool IsEven(int code)
    {
        return code % 2 == 0;
    }
}

public static class Rethrow
{
    public static int Logged;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Outer(int i)
    {
        int r = Middle(i);
        return r + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Middle(int i)
    {
        try
        {
            int r = Inner(i);
            return r + 1;
        }
        catch (FormatException)
        {
            Log(i);
            throw;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Inner(int i)
    {
        if (i >= 0)
        {
            throw new FormatException("inner, i = " + i);
        }
        return i;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Log(int i)
    {
        Logged += i >= 0 ? 1 : 0;
    }
}
