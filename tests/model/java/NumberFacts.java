import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Plain JDK, no Pulsar: the figures lbctl reproduces in Python. One command per stdin line,
 * fields separated by TAB, doubles written as Java reads them (hex floats, NaN, Infinity):
 *   ROUND x      Math.round(x)
 *   F32 x        Float.floatToRawIntBits((float) x)
 *   D2I x / D2L x  (int) x / (long) x
 *   PCT u l      Float.floatToRawIntBits of ResourceUsage.percentUsage()'s expression:
 *                0 unless l > 0, else (float) u / (float) l, times 100f
 *   HASH s       s.hashCode()
 *   CMP a b      Integer.signum(a.compareTo(b))
 *   END          prints END and flushes
 * Each answer is one line.
 */
public final class NumberFacts {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "ROUND": out.println(Math.round(Double.parseDouble(f[1]))); break;
                case "F32": out.println(Float.floatToRawIntBits((float) Double.parseDouble(f[1]))); break;
                case "D2I": out.println((int) Double.parseDouble(f[1])); break;
                case "D2L": out.println((long) Double.parseDouble(f[1])); break;
                case "PCT": {
                    double u = Double.parseDouble(f[1]);
                    double l = Double.parseDouble(f[2]);
                    float p = 0;
                    if (l > 0) {
                        p = ((float) u) / ((float) l);
                    }
                    out.println(Float.floatToRawIntBits(p * 100));
                    break;
                }
                case "HASH": out.println(f[1].hashCode()); break;
                case "CMP": out.println(Integer.signum(f[1].compareTo(f[2]))); break;
                case "END": out.println("END"); out.flush(); break;
                default: throw new IllegalArgumentException(line);
            }
        }
        out.flush();
    }
}
