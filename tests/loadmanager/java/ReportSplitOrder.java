import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Plain JDK: the order in which a report's hot bundles are split. Reads "name TAB hot" lines
 * (hot: 1 or 0), copies them (in that order) into a new HashMap with the copy constructor, walks
 * the copy, adds each hot name to a new HashSet, and prints "order TAB name TAB ..." in the
 * set's iteration order.
 */
public final class ReportSplitOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, Boolean> source = new LinkedHashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            source.put(f[0], f[1].equals("1"));
        }
        Map<String, Boolean> copy = new HashMap<>(source);
        Set<String> picked = new HashSet<>();
        for (Map.Entry<String, Boolean> e : copy.entrySet()) {
            if (e.getValue()) {
                picked.add(e.getKey());
            }
        }
        StringBuilder out = new StringBuilder("order");
        for (String k : picked) {
            out.append('\t').append(k);
        }
        System.out.println(out);
    }
}
