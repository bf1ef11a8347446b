import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Prints the iteration order of JDK hash maps filled by a script on standard input (plain JDK).
 * One command per line, fields separated by TAB:
 *   NEW chm|hashmap|hashset [N]   a new map (N: the initial-capacity constructor)
 *   TOMAP                         a HashMap collected with Collectors.toMap from the current map
 *   COPY chm|hashmap              the current map replaced by its copy: new ConcurrentHashMap<>(map)
 *                                 or new HashMap<>(map)
 *   PUT key / REM key / CLEAR     map operations
 *   PRINT id                      prints "id TAB key TAB key ..." in iteration order
 */
public final class MapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        Map<String, String> map = null;
        HashSet<String> set = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "NEW":
                    boolean sized = f.length > 2;
                    int n = sized ? Integer.parseInt(f[2]) : 0;
                    set = null;
                    if (f[1].equals("chm")) {
                        map = sized ? new ConcurrentHashMap<>(n) : new ConcurrentHashMap<>();
                    } else if (f[1].equals("hashmap")) {
                        map = sized ? new HashMap<>(n) : new HashMap<>();
                    } else {
                        map = null;
                        set = sized ? new HashSet<>(n) : new HashSet<>();
                    }
                    break;
                case "TOMAP":
                    map = map.entrySet().stream()
                            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
                    break;
                case "COPY":
                    map = f[1].equals("chm") ? new ConcurrentHashMap<>(map) : new HashMap<>(map);
                    break;
                case "PUT":
                    if (map != null) { map.put(f[1], "v"); } else { set.add(f[1]); }
                    break;
                case "REM":
                    if (map != null) { map.remove(f[1]); } else { set.remove(f[1]); }
                    break;
                case "CLEAR":
                    if (map != null) { map.clear(); } else { set.clear(); }
                    break;
                case "PRINT":
                    Collection<String> keys = map != null ? map.keySet() : set;
                    out.append(f[1]);
                    for (String k : keys) {
                        out.append('\t').append(k);
                    }
                    out.append('\n');
                    break;
                default:
                    throw new IllegalArgumentException(line);
            }
        }
        System.out.print(out);
    }
}
