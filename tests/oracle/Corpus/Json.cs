// Program `json`: a JSON document model (an abstract value class with one subclass per kind),
// a recursive-descent parser over a character cursor (a struct), a serializer, and a few queries
// over the parsed tree. The text is generated, parsed, written back and parsed again.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Corpus;

public static class Json
{
    public static int Run()
    {
        string text = Generate(24);
        JsonValue doc = JsonParser.Parse(text);
        string again = doc.ToJson();
        JsonValue doc2 = JsonParser.Parse(again);
        bool same = again == doc2.ToJson();
        var orders = (JsonArray)((JsonObject)doc)["orders"];
        double total = 0;
        foreach (JsonValue o in orders.Items)
        {
            total += Total((JsonObject)o);
        }
        int errors = 0;
        foreach (string bad in new[] { "[1, 2", "{\"a\" 1}", "tru", "[1,]x", "\"open" })
        {
            try
            {
                JsonParser.Parse(bad);
            }
            catch (JsonParseException)
            {
                errors++;
            }
        }
        return Program.Expect("json", $"{same} {doc.CountNodes()} {total:F2} {errors}", "True 428 3825.00 5");
    }

    /// A document of `n` orders, each with an id, a customer, flags and a list of items.
    private static string Generate(int n)
    {
        var sb = new StringBuilder("{\"name\": \"shop \\\"north\\\"\", \"version\": 3, \"orders\": [");
        for (int i = 0; i < n; i++)
        {
            if (i > 0)
            {
                sb.Append(", ");
            }
            sb.Append("{\"id\": ").Append(i)
              .Append(", \"customer\": \"c\\u00e9").Append(i % 17).Append('"')
              .Append(", \"paid\": ").Append(i % 3 == 0 ? "true" : "false")
              .Append(", \"note\": null, \"items\": [");
            for (int j = 0; j < i % 5 + 1; j++)
            {
                if (j > 0)
                {
                    sb.Append(',');
                }
                sb.Append("{\"sku\": \"s").Append(j).Append("\", \"qty\": ").Append(j + 1)
                  .Append(", \"price\": ").Append(((i * 7 + j * 3) % 50 + 0.25).ToString(CultureInfo.InvariantCulture)).Append('}');
            }
            sb.Append("]}");
        }
        return sb.Append("]}").ToString();
    }

    private static double Total(JsonObject order)
    {
        double sum = 0;
        foreach (JsonValue item in ((JsonArray)order["items"]).Items)
        {
            var it = (JsonObject)item;
            sum += ((JsonNumber)it["qty"]).Value * ((JsonNumber)it["price"]).Value;
        }
        return sum;
    }
}

public abstract class JsonValue
{
    public abstract void Write(StringBuilder sb);

    public virtual int CountNodes() => 1;

    public string ToJson()
    {
        var sb = new StringBuilder();
        Write(sb);
        return sb.ToString();
    }

    public override string ToString() => ToJson();
}

public sealed class JsonNull : JsonValue
{
    public static readonly JsonNull Instance = new();

    public override void Write(StringBuilder sb) => sb.Append("null");
}

public sealed class JsonBool : JsonValue
{
    public JsonBool(bool value) => Value = value;

    public bool Value { get; }

    public override void Write(StringBuilder sb) => sb.Append(Value ? "true" : "false");
}

public sealed class JsonNumber : JsonValue
{
    public JsonNumber(double value) => Value = value;

    public double Value { get; }

    public override void Write(StringBuilder sb) => sb.Append(Value.ToString("R", CultureInfo.InvariantCulture));
}

public sealed class JsonString : JsonValue
{
    public JsonString(string value) => Value = value;

    public string Value { get; }

    public override void Write(StringBuilder sb) => WriteString(sb, Value);

    public static void WriteString(StringBuilder sb, string s)
    {
        sb.Append('"');
        foreach (char c in s)
        {
            switch (c)
            {
                case '"': sb.Append("\\\""); break;
                case '\\': sb.Append("\\\\"); break;
                case '\n': sb.Append("\\n"); break;
                default:
                    if (c < ' ' || c > '~')
                    {
                        sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                    }
                    else
                    {
                        sb.Append(c);
                    }
                    break;
            }
        }
        sb.Append('"');
    }
}

public sealed class JsonArray : JsonValue
{
    public List<JsonValue> Items { get; } = new();

    public override void Write(StringBuilder sb)
    {
        sb.Append('[');
        for (int i = 0; i < Items.Count; i++)
        {
            if (i > 0)
            {
                sb.Append(',');
            }
            Items[i].Write(sb);
        }
        sb.Append(']');
    }

    public override int CountNodes()
    {
        int n = 1;
        foreach (JsonValue v in Items)
        {
            n += v.CountNodes();
        }
        return n;
    }
}

public sealed class JsonObject : JsonValue
{
    private readonly List<KeyValuePair<string, JsonValue>> members = new();

    public JsonValue this[string key]
    {
        get
        {
            foreach (var m in members)
            {
                if (m.Key == key)
                {
                    return m.Value;
                }
            }
            throw new KeyNotFoundException(key);
        }
    }

    public void Add(string key, JsonValue value) => members.Add(new(key, value));

    public override void Write(StringBuilder sb)
    {
        sb.Append('{');
        for (int i = 0; i < members.Count; i++)
        {
            if (i > 0)
            {
                sb.Append(',');
            }
            JsonString.WriteString(sb, members[i].Key);
            sb.Append(':');
            members[i].Value.Write(sb);
        }
        sb.Append('}');
    }

    public override int CountNodes()
    {
        int n = 1;
        foreach (var m in members)
        {
            n += m.Value.CountNodes();
        }
        return n;
    }
}

public sealed class JsonParseException : Exception
{
    public JsonParseException(string message, int position) : base($"{message} at {position}") { }
}

/// Recursive descent: Value → Object | Array | String | Number | true | false | null.
public static class JsonParser
{
    public static JsonValue Parse(string text)
    {
        var c = new Cursor(text);
        JsonValue v = ParseValue(ref c);
        c.SkipSpace();
        if (!c.AtEnd)
        {
            throw new JsonParseException("trailing text", c.Pos);
        }
        return v;
    }

    private static JsonValue ParseValue(ref Cursor c)
    {
        c.SkipSpace();
        return c.Peek() switch
        {
            '{' => ParseObject(ref c),
            '[' => ParseArray(ref c),
            '"' => new JsonString(ParseString(ref c)),
            't' => Literal(ref c, "true", new JsonBool(true)),
            'f' => Literal(ref c, "false", new JsonBool(false)),
            'n' => Literal(ref c, "null", JsonNull.Instance),
            _ => ParseNumber(ref c),
        };
    }

    private static JsonValue Literal(ref Cursor c, string word, JsonValue value)
    {
        foreach (char w in word)
        {
            c.Expect(w);
        }
        return value;
    }

    private static JsonObject ParseObject(ref Cursor c)
    {
        var o = new JsonObject();
        c.Expect('{');
        c.SkipSpace();
        if (c.TryTake('}'))
        {
            return o;
        }
        do
        {
            c.SkipSpace();
            string key = ParseString(ref c);
            c.SkipSpace();
            c.Expect(':');
            o.Add(key, ParseValue(ref c));
            c.SkipSpace();
        }
        while (c.TryTake(','));
        c.Expect('}');
        return o;
    }

    private static JsonArray ParseArray(ref Cursor c)
    {
        var a = new JsonArray();
        c.Expect('[');
        c.SkipSpace();
        if (c.TryTake(']'))
        {
            return a;
        }
        do
        {
            a.Items.Add(ParseValue(ref c));
            c.SkipSpace();
        }
        while (c.TryTake(','));
        c.Expect(']');
        return a;
    }

    private static string ParseString(ref Cursor c)
    {
        c.Expect('"');
        var sb = new StringBuilder();
        while (true)
        {
            char ch = c.Next();
            if (ch == '"')
            {
                return sb.ToString();
            }
            if (ch != '\\')
            {
                sb.Append(ch);
                continue;
            }
            char esc = c.Next();
            sb.Append(esc switch
            {
                'n' => '\n',
                't' => '\t',
                'u' => (char)int.Parse(c.Take(4), NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                _ => esc,
            });
        }
    }

    private static JsonNumber ParseNumber(ref Cursor c)
    {
        int start = c.Pos;
        while (!c.AtEnd && "+-0123456789.eE".Contains(c.Peek()))
        {
            c.Next();
        }
        if (c.Pos == start)
        {
            throw new JsonParseException("value expected", start);
        }
        return new JsonNumber(double.Parse(c.Slice(start), CultureInfo.InvariantCulture));
    }

    private struct Cursor
    {
        private readonly string text;

        public Cursor(string text)
        {
            this.text = text;
            Pos = 0;
        }

        /// A field, not a property: the cursor's position is read on every character.
        public int Pos;

        public readonly bool AtEnd => Pos >= text.Length;

        public readonly char Peek() => AtEnd ? '\0' : text[Pos];

        public char Next() => AtEnd ? throw new JsonParseException("unexpected end", Pos) : text[Pos++];

        public void Expect(char ch)
        {
            if (Next() != ch)
            {
                throw new JsonParseException($"'{ch}' expected", Pos - 1);
            }
        }

        public bool TryTake(char ch)
        {
            if (Peek() != ch)
            {
                return false;
            }
            Pos++;
            return true;
        }

        public void SkipSpace()
        {
            while (!AtEnd && char.IsWhiteSpace(text[Pos]))
            {
                Pos++;
            }
        }

        public string Take(int n)
        {
            string s = text.Substring(Pos, n);
            Pos += n;
            return s;
        }

        public readonly string Slice(int start) => text[start..Pos];
    }
}
