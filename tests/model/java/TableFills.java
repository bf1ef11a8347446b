import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Plain JDK, no Pulsar: a HashMap (or ConcurrentHashMap) kept across fills, its iteration order
 * and the length of its table (read by reflection: run with --add-opens
 * java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED). One
 * command per stdin line, fields separated by TAB:
 *   NEW [N]     a new HashMap (N: the initial-capacity constructor)
 *   CHM         a new ConcurrentHashMap
 *   CLEAR       clear(): the table is kept
 *   PUT key     put(key, "v")
 *   REM key     remove(key)
 *   PRINT id    prints "id TAB length TAB key TAB key ..." (length 0: no table yet)
 *   END         prints "END" and flushes, so that a caller can send one script at a time
 */
public final class TableFills {
    public static void main(String[] args) throws Exception {
        Field table = HashMap.class.getDeclaredField("table");
        table.setAccessible(true);
        Field chmTable = ConcurrentHashMap.class.getDeclaredField("table");
        chmTable.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Map<String, String> map = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "NEW":
                    map = f.length > 1 ? new HashMap<>(Integer.parseInt(f[1])) : new HashMap<>();
                    break;
                case "CHM":
                    map = new ConcurrentHashMap<>();
                    break;
                case "REM":
                    map.remove(f[1]);
                    break;
                case "CLEAR":
                    map.clear();
                    break;
                case "PUT":
                    map.put(f[1], "v");
                    break;
                case "PRINT":
                    Object[] t = (Object[]) (map instanceof HashMap ? table : chmTable).get(map);
                    StringBuilder sb = new StringBuilder(f[1]).append('\t').append(t == null ? 0 : t.length);
                    for (String k : map.keySet()) {
                        sb.append('\t').append(k);
                    }
                    out.println(sb);
                    break;
                case "END":
                    out.println("END");
                    out.flush();
                    break;
                default:
                    throw new IllegalArgumentException(line);
            }
        }
        out.flush();
    }
}
