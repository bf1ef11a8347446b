import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Plain JDK only. Each case: "CASE id" then "KEY name rate" lines then "END". The keys are put
 * into a LinkedHashMap (the JSON's order), copied into a HashMap (as LoadReport.setBundleStats
 * does), then put into a TreeMap whose comparator answers -1 when a's rate exceeds b's by more
 * than 100 and 1 otherwise (never 0). Prints "id<TAB>hashmap keys...<TAB>|<TAB>treemap keys...".
 */
public class SortedStats {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        String id = null;
        Map<String, Double> linked = null;
        StringBuilder out = new StringBuilder();
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t");
            if (p[0].equals("CASE")) {
                id = p[1];
                linked = new LinkedHashMap<>();
            } else if (p[0].equals("KEY")) {
                linked.put(p[1], Double.parseDouble(p[2]));
            } else if (p[0].equals("END")) {
                final Map<String, Double> copy = new HashMap<>(linked);
                TreeMap<String, Double> tree = new TreeMap<>((a, b) -> {
                    double x = copy.get(a);
                    double y = copy.get(b);
                    int r = Math.abs(x - y) > 100 ? Double.compare(x, y) : 0;
                    return r > 0 ? -1 : 1;
                });
                tree.putAll(copy);
                List<String> parts = new ArrayList<>();
                parts.add(id);
                parts.addAll(copy.keySet());
                parts.add("|");
                parts.addAll(tree.keySet());
                out.append(String.join("\t", parts)).append('\n');
            }
        }
        System.out.print(out);
    }
}
