import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Plain JDK, no Pulsar: a field HashSet cleared and refilled from a new HashSet copy of a list,
 * the shape of a modular load manager's candidate set filled from the available brokers.
 * Each stdin line is "ID TAB name TAB name ..." (one fill, in list order); prints
 * "ID TAB name ..." as the kept set then iterates. A line "NEW" starts a new kept set. A line
 * "RECHECK TAB ID TAB name ..." removes those names from the kept set (a filter), then adds every
 * name of the last copy again without clearing (the overload re-check) and prints as above.
 */
public final class CandidateOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        Set<String> kept = new HashSet<>();
        Set<String> copy = new HashSet<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("NEW")) {
                kept = new HashSet<>();
                continue;
            }
            String[] f = line.split("\t", -1);
            String id = f[0];
            if (f[0].equals("RECHECK")) {
                id = f[1];
                kept.removeAll(Arrays.asList(f).subList(2, f.length));
            } else {
                copy = new HashSet<>(Arrays.asList(f).subList(1, f.length));
                kept.clear();
            }
            for (String b : copy) {
                kept.add(b);
            }
            out.append(id);
            for (String b : kept) {
                out.append('\t').append(b);
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
