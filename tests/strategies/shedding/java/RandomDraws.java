import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Random;

/** Plain JDK: for each line "seed<TAB>count", the draws of new Random(seed) in the order the
 * test makes them per row: nextDouble four times, nextInt(375), nextInt(300000). */
public class RandomDraws {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t");
            Random r = new Random(Long.parseLong(f[0]));
            int n = Integer.parseInt(f[1]);
            StringBuilder out = new StringBuilder(f[0]);
            for (int i = 0; i < n; i++) {
                out.append('\t').append(Double.doubleToRawLongBits(r.nextDouble()));
                out.append('\t').append(Double.doubleToRawLongBits(r.nextDouble()));
                out.append('\t').append(Double.doubleToRawLongBits(r.nextDouble()));
                out.append('\t').append(Double.doubleToRawLongBits(r.nextDouble()));
                out.append('\t').append(r.nextInt(375));
                out.append('\t').append(r.nextInt(300000));
            }
            System.out.println(out);
        }
    }
}
