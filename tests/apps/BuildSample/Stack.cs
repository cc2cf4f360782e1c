// A small generic collection, for the compiler's generic binding and flow analysis.
using System;
using System.Collections;
using System.Collections.Generic;

namespace BuildSample;

public sealed class Stack<T> : IEnumerable<T>
{
    private T[] items = new T[4];
    private int count;

    public int Count => count;

    public void Push(T item)
    {
        if (count == items.Length)
        {
            Array.Resize(ref items, items.Length * 2);
        }
        items[count++] = item;
    }

    public bool TryPop(out T? item)
    {
        if (count == 0)
        {
            item = default;
            return false;
        }
        item = items[--count];
        items[count] = default!;
        return true;
    }

    public IEnumerator<T> GetEnumerator()
    {
        for (int i = count - 1; i >= 0; i--)
        {
            yield return items[i];
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}
